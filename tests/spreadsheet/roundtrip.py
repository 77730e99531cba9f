#!/usr/bin/env python3
"""Round-trip a CSV or XLSX file through real LibreOffice Calc in a given locale and check that
every number arrives as a number (same value) and every text as the same text.

Usage:
  roundtrip.py FILE LOCALE [--dialect comma|semicolon] [--text-columns a,b]
               [--infilter OPTIONS] [--keep DIR] [--show N] [--soffice PATH]

  FILE     a .csv or .xlsx file (the original: it is also the expectation, see below)
  LOCALE   e.g. de_DE, uk_UA, en_US (".UTF-8" is appended when no "." is given); soffice runs
           with LC_ALL and LANG set to it and a fresh user profile, so its default locale
           (decimal separator, date order) is that one.
  --infilter  CSV import options for soffice, either the bare token string
           ("44,34,76,1,,1033") or "FilterName:tokens"; without it LibreOffice's DEFAULT
           import is used (what a user gets by opening the file).

The expectation is read from the original with no LibreOffice involved:
  .xlsx  every sheet, every cell of the original read with openpyxl: numbers must come back
         numeric with the same value, strings as the same strings, empty as empty.
  .csv   parsed with Python's csv module in --dialect (comma: ',' separates, '.' is the decimal
         mark; semicolon: ';' separates, ',' is the decimal mark). A field that is a plain
         decimal number ([+-]digits[.digits][e[+-]digits], with ',' for semicolon) is expected
         numeric, except in columns named point_id or ending in _id and columns named in
         --text-columns, which are expected as the same text; other fields (nan, inf, names,
         statuses, the header row) are expected as text; empty fields as empty cells.
Numbers compare with a relative tolerance of 1e-12.

Output: one line
  LOCALE FILE: N cells, W wrong (T numbers as text, M numbers changed, I texts changed)
then up to --show wrong cells. "numbers changed" counts expected numbers that came back as
another number, a date, a bool or empty; "texts changed" counts expected texts or empty cells
that came back different (a text id turned into a number lands here).
Exit status: 0 all cells right, 1 some wrong, 2 conversion failed or bad usage, 3 soffice or
openpyxl is missing (one line on stderr says which; scripts/ensure-libreoffice.sh installs both).
"""
import argparse
import csv
import datetime
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

CSV_FILTER = "Text - txt - csv (StarCalc)"
NUM_DOT = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
NUM_COMMA = re.compile(r"^[+-]?(\d+(,\d*)?|,\d+)([eE][+-]?\d+)?$")
REL_TOL = 1e-12

EMPTY = ("empty", None)


def col_letter(i):
    s = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        s = chr(65 + r) + s
    return s


def expected_from_csv(path, dialect, text_columns):
    """{sheet: {(row, col): (kind, value)}} with kind 'num', 'text' or 'empty'."""
    delim, num_re = (",", NUM_DOT) if dialect == "comma" else (";", NUM_COMMA)
    with open(path, newline="", encoding="utf-8-sig") as f:
        rows = list(csv.reader(f, delimiter=delim))
    header = rows[0] if rows else []
    text_cols = set()
    for j, name in enumerate(header):
        if name == "point_id" or name.endswith("_id") or name in text_columns:
            text_cols.add(j)
    cells = {}
    for i, row in enumerate(rows):
        for j, field in enumerate(row):
            if field == "":
                continue
            if i > 0 and j not in text_cols and num_re.match(field):
                cells[(i, j)] = ("num", float(field.replace(",", ".")))
            else:
                cells[(i, j)] = ("text", field)
    return {None: cells}, header  # None: the only sheet, whatever LibreOffice names it


def classify(v):
    if v is None or v == "":
        return EMPTY
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, (int, float)):
        return ("num", float(v))
    if isinstance(v, (datetime.datetime, datetime.date, datetime.time, datetime.timedelta)):
        return ("date", v)
    return ("text", str(v))


def read_xlsx(path, openpyxl):
    wb = openpyxl.load_workbook(path, read_only=True, data_only=False)
    sheets = {}
    for ws in wb.worksheets:
        cells = {}
        for i, row in enumerate(ws.iter_rows(values_only=True)):
            for j, v in enumerate(row):
                k = classify(v)
                if k != EMPTY:
                    cells[(i, j)] = k
        sheets[ws.title] = cells
    wb.close()
    return sheets


def same_number(a, b):
    if a == b:
        return True
    if math.isnan(a) or math.isnan(b):
        return False
    return abs(a - b) <= REL_TOL * max(abs(a), abs(b))


def convert(src, locale, infilter, soffice, workdir, timeout):
    """Runs soffice on a copy of src; returns (path of the .xlsx it wrote, seconds)."""
    indir = os.path.join(workdir, "in")
    outdir = os.path.join(workdir, "out")
    profile = os.path.join(workdir, "profile")
    os.makedirs(indir)
    os.makedirs(outdir)
    copy = os.path.join(indir, os.path.basename(src))
    shutil.copyfile(src, copy)
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("LC_"):
            del env[k]
    env["LC_ALL"] = env["LANG"] = locale
    env["HOME"] = workdir  # nothing of the caller's ~/.config leaks in
    cmd = [soffice, "-env:UserInstallation=file://" + profile, "--headless", "--norestore",
           "--nolockcheck", "--convert-to", "xlsx", "--outdir", outdir]
    if infilter:
        if not infilter.split(",")[0].split(":")[0].strip().isdigit() and ":" in infilter:
            cmd.append("--infilter=" + infilter)
        else:
            cmd.append("--infilter=" + CSV_FILTER + ":" + infilter)
    cmd.append(copy)
    t0 = time.monotonic()
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=timeout, text=True)
    dt = time.monotonic() - t0
    out = os.path.join(outdir, os.path.splitext(os.path.basename(src))[0] + ".xlsx")
    if p.returncode != 0 or not os.path.exists(out):
        sys.stderr.write("soffice failed (exit %d): %s\n%s" % (p.returncode, " ".join(cmd), p.stdout))
        sys.exit(2)
    return out, dt


def describe(k):
    kind, v = k
    if kind == "empty":
        return "empty"
    if kind == "num":
        return "number %r" % v
    r = repr(v)
    return "%s %s" % (kind, r if len(r) <= 60 else r[:57] + "...")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    ap.add_argument("locale")
    ap.add_argument("--dialect", choices=["comma", "semicolon"], default="comma")
    ap.add_argument("--text-columns", default="", help="comma-separated column names")
    ap.add_argument("--infilter", default=None)
    ap.add_argument("--expect-csv", default=None, metavar="CSV[:SHEET]",
                    help="xlsx only: the expectation of sheet SHEET (default: results) is this CSV "
                         "(read as for a .csv FILE, with --dialect and --text-columns), not the "
                         "original's own cells: checks the workbook's types against the source")
    ap.add_argument("--keep", default=None, help="copy the converted .xlsx into this folder")
    ap.add_argument("--show", type=int, default=5, help="how many wrong cells to list")
    ap.add_argument("--soffice", default=os.environ.get("SOFFICE") or shutil.which("soffice"))
    ap.add_argument("--timeout", type=float, default=300)
    a = ap.parse_args()

    try:
        import openpyxl
    except ImportError:
        sys.stderr.write("skip: python3 cannot import openpyxl (run scripts/ensure-libreoffice.sh "
                         "and put its OPENPYXL_PATH on PYTHONPATH)\n")
        sys.exit(3)
    if not a.soffice or not os.path.exists(a.soffice):
        sys.stderr.write("skip: soffice (LibreOffice) not found (run scripts/ensure-libreoffice.sh)\n")
        sys.exit(3)
    locale = a.locale if "." in a.locale else a.locale + ".UTF-8"
    ext = os.path.splitext(a.file)[1].lower()
    header = []
    if ext == ".csv":
        texts = {c.strip() for c in a.text_columns.split(",") if c.strip()}
        expected, header = expected_from_csv(a.file, a.dialect, texts)
    elif ext == ".xlsx":
        expected = read_xlsx(a.file, openpyxl)
        if a.expect_csv:
            path, _, sheet = a.expect_csv.partition(":")
            texts = {c.strip() for c in a.text_columns.split(",") if c.strip()}
            cells, header = expected_from_csv(path, a.dialect, texts)
            expected[sheet or "results"] = cells[None]
    else:
        sys.stderr.write("FILE must end in .csv or .xlsx\n")
        sys.exit(2)

    with tempfile.TemporaryDirectory(prefix="roundtrip-") as tmp:
        out, secs = convert(os.path.abspath(a.file), locale, a.infilter, a.soffice, tmp, a.timeout)
        if a.keep:
            os.makedirs(a.keep, exist_ok=True)
            shutil.copy(out, a.keep)
        got = read_xlsx(out, openpyxl)

    if None in expected:  # csv: one sheet
        first = next(iter(got), "Sheet1")
        expected = {first: expected[None]}
    n = t = m = i_ = 0
    wrong = []
    for sheet in list(expected) + [s for s in got if s not in expected]:
        exp, g = expected.get(sheet, {}), got.get(sheet)
        if g is None:
            wrong.append("sheet %r missing" % sheet)
            g = {}
        for pos in sorted(set(exp) | set(g)):
            e, r = exp.get(pos, EMPTY), g.get(pos, EMPTY)
            n += 1
            if e[0] == "num":
                if r[0] == "num" and same_number(e[1], r[1]):
                    continue
                if r[0] == "text":
                    t += 1
                else:
                    m += 1
            elif e == r:
                continue
            else:
                i_ += 1
            col = header[pos[1]] if pos[0] > 0 and pos[1] < len(header) else ""
            wrong.append("%s!%s%d%s: expected %s, got %s" % (
                sheet, col_letter(pos[1]), pos[0] + 1, " [%s]" % col if col else "",
                describe(e), describe(r)))
    w = t + m + i_
    print("%s %s: %d cells, %d wrong (%d numbers as text, %d numbers changed, %d texts changed)"
          % (a.locale, os.path.basename(a.file), n, w, t, m, i_))
    for line in wrong[:a.show]:
        print("  " + line)
    print("  (soffice conversion took %.1f s)" % secs)
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
