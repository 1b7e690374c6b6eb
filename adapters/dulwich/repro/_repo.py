"""Shared set-up of the dulwich reproducers (stdlib only).

Each reproducer makes a reftable repository with git in a temporary directory, under a
hermetic environment (no system or global configuration, fixed identities and dates), and
shows one defect with dulwich's API alone. Exit status: 1 while the defect shows, 0 when
it does not, 2 when it cannot run (no dulwich, no git that makes reftable repositories).
"""

import atexit
import os
import shutil
import subprocess
import sys
import tempfile

SHOWS, GONE, CANNOT = 1, 0, 2


def cannot(why):
    print(f"cannot run: {why}", file=sys.stderr)
    sys.exit(CANNOT)


def verdict(shows, what):
    """Print what was seen and exit 1 (defect shows) or 0."""
    print(("SHOWS: " if shows else "gone: ") + what)
    sys.exit(SHOWS if shows else GONE)


def dulwich_repo():
    """dulwich's Repo class and its version, or exit 2."""
    try:
        import dulwich
        from dulwich.repo import Repo
    except ImportError as e:
        cannot(f"dulwich is not importable ({e}); run with the venv of adapters/dulwich/setup.sh")
    return Repo, ".".join(map(str, dulwich.__version__))


class Git:
    """git in one repository, with a hermetic environment."""

    def __init__(self, path, home):
        self.path = path
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": home,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_AUTHOR_NAME": "A U Thor",
            "GIT_AUTHOR_EMAIL": "author@example.com",
            "GIT_AUTHOR_DATE": "1700000000 +0200",
            "GIT_COMMITTER_NAME": "C O Mitter",
            "GIT_COMMITTER_EMAIL": "committer@example.com",
            "GIT_COMMITTER_DATE": "1700000000 +0200",
            "GIT_TEST_REFTABLE_AUTOCOMPACTION": "false",
            "LC_ALL": "C",
        }

    def run(self, *args, input=None, check=True):
        """git's completed process (text)."""
        p = subprocess.run(["git", *args], cwd=self.path, env=self.env, input=input,
                           capture_output=True, text=True)
        if check and p.returncode != 0:
            raise RuntimeError(f"git {' '.join(args)}: {p.returncode}: {p.stderr.strip()}")
        return p

    def out(self, *args, **kw):
        return self.run(*args, **kw).stdout.strip()


def reftable_repo():
    """A fresh reftable repository git made: main at C2, topic at C1 (each with a reflog).

    Returns (Git, gitdir). Exits 2 without a git that makes reftable repositories.
    """
    top = tempfile.mkdtemp(prefix="dulwich-repro-")
    atexit.register(shutil.rmtree, top, ignore_errors=True)
    home = os.path.join(top, "home")
    os.mkdir(home)
    path = os.path.join(top, "r")
    git = Git(top, home)
    try:
        p = git.run("init", "-q", "--ref-format=reftable", "-b", "main", path, check=False)
    except FileNotFoundError:
        cannot("no git on PATH")
    if p.returncode != 0:
        cannot(f"git cannot make a reftable repository: {p.stderr.strip()}")
    git.path = path
    git.run("commit", "-q", "--allow-empty", "-m", "one")
    git.run("commit", "-q", "--allow-empty", "-m", "two")
    git.run("update-ref", "-m", "make topic", "refs/heads/topic", "HEAD~1")
    return git, os.path.join(path, ".git")
