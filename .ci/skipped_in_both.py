"""Fail if any test was skipped in every CI run: backend-specific tests must run somewhere."""

import sys
import xml.etree.ElementTree as ET


def outcomes(path: str) -> tuple[set[str], set[str]]:
    ran, skipped = set(), set()
    for case in ET.parse(path).iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        (skipped if case.find("skipped") is not None else ran).add(name)
    return ran, skipped


def main(paths: list[str]) -> int:
    results = [outcomes(p) for p in paths]
    ran_anywhere = set().union(*(r for r, _ in results))
    skipped_everywhere = set.intersection(*(s for _, s in results)) - ran_anywhere
    total = len(ran_anywhere | skipped_everywhere)
    if skipped_everywhere:
        print(f"{len(skipped_everywhere)} test(s) skipped in every run:")
        for name in sorted(skipped_everywhere):
            print(f"  {name}")
        return 1
    print(f"{total} distinct tests, each ran in at least one backend run")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
