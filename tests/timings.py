"""Summarises the JUnit reports of a test run (tests/run.sh writes them to
target/test-reports/): each part's and suite's total time and test count,
the slowest tests, and last (where a CI log's tail shows them) the tests that
failed, each with its message's first lines. Usage: python3 tests/timings.py
REPORTS_DIR [N]."""

import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

# How many lines of a failed test's message the summary shows.
FAILURE_LINES = 4


def cases(report: Path):
    """(suite, test, seconds, failure) of every test case of one JUnit report;
    failure is None or the first lines of what the test's failure says."""
    for parent in ET.parse(report).iter():  # a test outside any suite hangs from the root
        for case in parent.findall("testcase"):
            yield case_row(parent, case)


def case_row(testsuite: ET.Element, case: ET.Element):
    suite = case.get("classname") or case.get("file") or "?"
    if suite == "test":  # Node's reporter: the describe block is the suite
        suite = testsuite.get("name") or suite
    name = case.get("name") or "?"
    if suite.endswith("::suites"):  # the Rust suites' one binary: a suite is a test's first module
        suite = f"{suite}::{name.split('::')[0]}"
        name = name.split("::", 1)[-1]
    failure = None
    for element in case.findall("failure") + case.findall("error"):
        said = f"{element.get('message') or ''}\n{element.text or ''}"
        lines = [line.strip()[:200] for line in said.splitlines() if line.strip()]
        failure = " / ".join(lines[:FAILURE_LINES]) or element.tag
    return suite, name, float(case.get("time") or 0), failure



def main() -> None:
    reports = Path(sys.argv[1])
    slowest = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    rows = []
    for report in sorted(reports.glob("*.xml")):
        try:
            rows += [(report.stem, *case) for case in cases(report)]
        except ET.ParseError as error:
            print(f"(unreadable report {report.name}: {error})")
    totals = defaultdict(lambda: [0.0, 0])
    for part, suite, _, seconds, _ in rows:
        for key in ((part, ""), (part, suite)):
            totals[key][0] += seconds
            totals[key][1] += 1
    print("| part | suite | tests | seconds (sum of the tests' times) |")
    print("|---|---|---:|---:|")
    for (part, suite), (seconds, count) in sorted(totals.items()):
        print(f"| {part} | {suite or '**all**'} | {count} | {seconds:.1f} |")
    print()
    print(f"The {slowest} slowest tests:")
    print()
    print("| part | test | seconds |")
    print("|---|---|---:|")
    for part, suite, name, seconds, _ in sorted(rows, key=lambda row: -row[3])[:slowest]:
        print(f"| {part} | {suite} {name} | {seconds:.1f} |")
    failed = [row for row in rows if row[4] is not None]
    if failed:
        print()
        print(f"{len(failed)} tests failed:")
        for part, suite, name, _, failure in failed[:20]:
            print(f"- {part}: {suite} {name}: {failure}")


if __name__ == "__main__":
    main()
