#!/usr/bin/env python3
"""Rewrites a comma-dialect CSV (',' separates, '.' decimal) as the semicolon dialect that
`sweep` writes (';' separates, ',' decimal mark in numbers), for roundtrip.py.

Usage: to_semicolon.py IN.csv OUT.csv
Only fields that are plain decimal numbers get their '.' turned into ','; id columns (point_id,
*_id) are copied as they are.
"""
import csv
import re
import sys

NUM = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def main():
    src, dst = sys.argv[1:3]
    with open(src, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    header = rows[0]
    ids = {j for j, h in enumerate(header) if h == "point_id" or h.endswith("_id")}
    with open(dst, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, delimiter=";", lineterminator="\n")
        w.writerow(header)
        for row in rows[1:]:
            w.writerow([v.replace(".", ",") if j not in ids and NUM.match(v) else v
                        for j, v in enumerate(row)])


if __name__ == "__main__":
    main()
