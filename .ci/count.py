"""Print CI's closing line, the plain count over every pytest run's JUnit file:
`N passed, N failed, N skipped` (errors count as failed)."""

import sys
import xml.etree.ElementTree as ET


def count(paths: list[str]) -> tuple[int, int, int]:
    passed = failed = skipped = 0
    for path in paths:
        try:
            cases = list(ET.parse(path).iter("testcase"))
        except (OSError, ET.ParseError):
            continue  # a run that never wrote its report counts nothing; CI has failed anyway
        for case in cases:
            if case.find("failure") is not None or case.find("error") is not None:
                failed += 1
            elif case.find("skipped") is not None:
                skipped += 1
            else:
                passed += 1
    return passed, failed, skipped


if __name__ == "__main__":
    passed, failed, skipped = count(sys.argv[1:])
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
