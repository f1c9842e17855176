"""Summarises the JUnit reports of a test run (tests/run.sh writes them to
target/test-reports/): each part's and suite's total time and test count,
and the slowest tests. Usage: python3 tests/timings.py REPORTS_DIR [N]."""

import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path


def cases(report: Path):
    """(suite, test, seconds) of every test case of one JUnit report."""
    for case in ET.parse(report).iter("testcase"):
        suite = case.get("classname") or case.get("file") or "?"
        name = case.get("name") or "?"
        if suite.endswith("::suites"):  # the Rust suites' one binary: a suite is a test's first module
            suite = f"{suite}::{name.split('::')[0]}"
            name = name.split("::", 1)[-1]
        yield suite, name, float(case.get("time") or 0)


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
    for part, suite, _, seconds in rows:
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
    for part, suite, name, seconds in sorted(rows, key=lambda row: -row[3])[:slowest]:
        print(f"| {part} | {suite} {name} | {seconds:.1f} |")


if __name__ == "__main__":
    main()
