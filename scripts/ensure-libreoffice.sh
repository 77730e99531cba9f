#!/usr/bin/env bash
# Makes LibreOffice Calc (headless `soffice`) and Python's openpyxl available for the spreadsheet
# round-trip check (tests/spreadsheet/roundtrip.py). Idempotent: does nothing when both are there.
#
# Output (stdout, two lines, meant for `eval "$(scripts/ensure-libreoffice.sh)"`):
#   SOFFICE='/usr/bin/soffice'          the soffice binary
#   OPENPYXL_PATH='/repo/.tools/py'     a folder to prepend to PYTHONPATH ('' when python3 already
#                                       imports openpyxl)
# Progress and timings go to stderr.
#
# Exit status: 0 ready; 3 something is missing and we are not root (cannot apt-get): one line on
# stderr says what, so a test can skip with that reason; anything else: the install failed.
#
# What it installs when missing:
#   - Debian's libreoffice-calc-nogui with --no-install-recommends (no X11/GTK; ~300 MB unpacked).
#   - openpyxl from PyPI into .tools/py (ignored by git) with `pip install --target`.
# No glibc locales are generated: LibreOffice takes its default locale (decimal separator etc.)
# from LC_ALL/LC_CTYPE/LANG alone, whether or not that locale exists in glibc (checked on
# Debian 12 with LibreOffice 7.4: de_DE.UTF-8 reads "1,5" as 1.5 without `locale-gen`).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pydir="$root/.tools/py"
# One install at a time: the tests that need it start together.
mkdir -p "$root/.tools"
exec 9>"$root/.tools/.libreoffice.lock"
flock 9

find_soffice() {
  command -v soffice 2>/dev/null || { [ -x /usr/bin/soffice ] && echo /usr/bin/soffice; } || true
}
have_openpyxl() { # $1: extra PYTHONPATH ('' for none)
  PYTHONPATH="$1${PYTHONPATH:+:$PYTHONPATH}" python3 -c 'import openpyxl' >/dev/null 2>&1
}

soffice=$(find_soffice)
pypath=""
if ! have_openpyxl ""; then pypath="$pydir"; fi
need_lo=0; need_py=0
[ -n "$soffice" ] || need_lo=1
if [ -n "$pypath" ] && ! have_openpyxl "$pypath"; then need_py=1; fi

if [ "$need_lo" = 1 ] && [ "$(id -u)" != 0 ]; then
  echo "skip: LibreOffice (soffice) is not installed and this user is not root to apt-get it" >&2
  exit 3
fi

if [ "$need_lo" = 1 ]; then
  start=$(date +%s)
  echo "installing libreoffice-calc-nogui with apt-get (no recommends)..." >&2
  export DEBIAN_FRONTEND=noninteractive
  flock /tmp/sweep-apt.lock apt-get -o DPkg::Lock::Timeout=600 update -qq >&2  # one apt-get at a time (slurm-up.sh too)
  if apt-cache show libreoffice-calc-nogui >/dev/null 2>&1; then pkg=libreoffice-calc-nogui
  else pkg=libreoffice-calc; fi
  flock /tmp/sweep-apt.lock apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "$pkg" >&2
  soffice=$(find_soffice)
  [ -n "$soffice" ] || { echo "error: soffice not found after installing $pkg" >&2; exit 1; }
  echo "installed $pkg in $(( $(date +%s) - start )) s" >&2
fi

if [ "$need_py" = 1 ]; then
  start=$(date +%s)
  echo "installing openpyxl from PyPI into $pydir..." >&2
  PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check --target "$pydir" openpyxl >&2
  have_openpyxl "$pypath" || { echo "error: python3 cannot import openpyxl from $pydir" >&2; exit 1; }
  echo "installed openpyxl in $(( $(date +%s) - start )) s" >&2
fi

echo "SOFFICE='$soffice'"
echo "OPENPYXL_PATH='$pypath'"
