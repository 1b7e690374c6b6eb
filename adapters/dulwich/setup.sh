#!/bin/sh
# Make a virtual environment with a pinned dulwich for adapters/dulwich/adapter.py.
#
#   adapters/dulwich/setup.sh [VERSION_OR_PATH] [VENV_DIR]
#
# VERSION_OR_PATH: a dulwich release (default 1.2.21), or the path to a dulwich checkout
# (installed from its source). VENV_DIR: where to make the environment (default
# ./.venv-dulwich-VERSION). Prints the python to run the adapter with, on the last line of
# stdout; everything else goes to stderr. Exits non-zero when it cannot make it.
set -eu
spec=${1:-1.2.21}
venv=${2:-}
python=${PYTHON:-python3}

if [ -d "$spec" ]; then
    target=$(cd "$spec" && pwd)
    [ -n "$venv" ] || venv=./.venv-dulwich-checkout
else
    case $spec in
        *[!0-9A-Za-z.+-]*) echo "setup.sh: '$spec' is neither a version nor a directory" >&2; exit 2 ;;
    esac
    target="dulwich==$spec"
    [ -n "$venv" ] || venv=./.venv-dulwich-$spec
fi

"$python" -m venv "$venv" >&2
"$venv/bin/pip" install --quiet --disable-pip-version-check "$target" >&2
"$venv/bin/python" -c 'import dulwich, sys; sys.stderr.write("dulwich %s\n" % ".".join(map(str, dulwich.__version__)))'
cd "$venv" && echo "$(pwd)/bin/python"
