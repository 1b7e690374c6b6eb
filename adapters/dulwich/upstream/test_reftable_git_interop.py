# test_reftable_git_interop.py -- dulwich and C git on one reftable repository
#
# Offered to dulwich under its usual terms (Apache-2.0 OR GPL-2.0-or-later).
#

"""Interoperability of dulwich's reftable refs container with C git.

Every test lets C git make a reftable repository in a temporary directory, does one thing
with dulwich's public API, and checks the outcome against what git itself does (or reads
back what dulwich wrote with git). Each test carries ``expectedFailure`` because it shows a
defect of dulwich 1.2.21; once a defect is fixed its test reports an "unexpected success"
and the decorator should be dropped.

The tests skip when no ``git`` on PATH can make reftable repositories (git 2.45 or newer).
They fit beside dulwich's compat tests (``tests/compat/``), whose ``run_git_or_fail`` and
``CompatTestCase`` could replace the small helpers below; the file runs on its own too::

    python -m unittest test_reftable_git_interop -v
"""

import os
import shutil
import struct
import subprocess
import tempfile
import unittest

from dulwich.repo import Repo


def _git_environment(home):
    """An environment in which git ignores the user's configuration and clock."""
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": home,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "A U Thor",
        "GIT_AUTHOR_EMAIL": "author@example.com",
        "GIT_AUTHOR_DATE": "1700000000 +0200",
        "GIT_COMMITTER_NAME": "C O Mitter",
        "GIT_COMMITTER_EMAIL": "committer@example.com",
        "GIT_COMMITTER_DATE": "1700000000 +0200",
        # Keep every write in a table of its own, so the stack's order matters.
        "GIT_TEST_REFTABLE_AUTOCOMPACTION": "false",
        "LC_ALL": "C",
    }
    if "SYSTEMROOT" in os.environ:
        env["SYSTEMROOT"] = os.environ["SYSTEMROOT"]
    return env


class ReftableGitInteropTestCase(unittest.TestCase):
    """Base: a reftable repository made by git, opened with dulwich.

    The repository: ``main`` with two commits, ``topic`` at the first one, each with a
    reflog git wrote; ``HEAD`` -> ``refs/heads/main``.
    """

    def setUp(self):
        super().setUp()
        top = tempfile.mkdtemp(prefix="dulwich-reftable-")
        self.addCleanup(shutil.rmtree, top, ignore_errors=True)
        home = os.path.join(top, "home")
        os.mkdir(home)
        self._env = _git_environment(home)
        self.worktree = os.path.join(top, "repo")
        self.gitdir = os.path.join(self.worktree, ".git")
        try:
            made = subprocess.run(
                ["git", "init", "-q", "--ref-format=reftable", "-b", "main", self.worktree],
                env=self._env, capture_output=True,
            )
        except FileNotFoundError:
            self.skipTest("git is not installed")
        if made.returncode != 0:
            self.skipTest("this git cannot make reftable repositories")
        self.git("commit", "-q", "--allow-empty", "-m", "first")
        self.git("commit", "-q", "--allow-empty", "-m", "second")
        self.git("update-ref", "-m", "start topic", "refs/heads/topic", "HEAD~1")
        self.main = self.git_out("rev-parse", "refs/heads/main").encode("ascii")
        self.topic = self.git_out("rev-parse", "refs/heads/topic").encode("ascii")

    def git(self, *args, stdin=None, check=True):
        """Run git in the repository; return the completed process (bytes)."""
        proc = subprocess.run(
            ["git", *args], cwd=self.worktree, env=self._env, input=stdin,
            capture_output=True,
        )
        if check and proc.returncode != 0:
            self.fail(
                "git %s exited %d: %s"
                % (" ".join(args), proc.returncode, proc.stderr.decode("utf-8", "replace"))
            )
        return proc

    def git_out(self, *args):
        return self.git(*args).stdout.decode("utf-8").strip()

    def git_refnames(self, prefix="refs/"):
        return self.git_out("for-each-ref", "--format=%(refname)", prefix).split()

    def git_reflog_length(self, refname):
        out = self.git_out("reflog", "show", "--format=%H", refname, "--")
        return len(out.split())

    def open_repo(self):
        repo = Repo(self.gitdir)
        self.addCleanup(repo.close)
        return repo


class ReftableRefUpdateTests(ReftableGitInteropTestCase):
    """Writes through ``RefsContainer``'s documented contract."""

    @unittest.expectedFailure
    def test_setitem_replaces_existing_ref(self):
        # RefsContainer documents old_ref=None as "set unconditionally"; the reftable
        # container treats it as "must not exist" (ReftableRefsContainer.set_if_equals),
        # and __setitem__ drops the False it returns: the write is lost without a word.
        repo = self.open_repo()
        repo.refs[b"refs/heads/main"] = self.topic
        self.assertEqual(self.topic.decode(), self.git_out("rev-parse", "refs/heads/main"))

    @unittest.expectedFailure
    def test_set_if_equals_follows_head(self):
        # git update-ref HEAD NEW OLD moves the branch HEAD points at. dulwich compares the
        # expected id with HEAD's raw record ("ref: refs/heads/main") and gives up.
        repo = self.open_repo()
        self.assertTrue(repo.refs.set_if_equals(b"HEAD", self.main, self.topic))
        self.assertEqual(self.topic.decode(), self.git_out("rev-parse", "refs/heads/main"))
        self.assertEqual("refs/heads/main", self.git_out("symbolic-ref", "HEAD"))

    @unittest.expectedFailure
    def test_add_if_new_refuses_name_below_existing_ref(self):
        # git: 'refs/heads/main' exists; cannot create 'refs/heads/main/sub'.
        self.assertNotEqual(
            0, self.git("update-ref", "refs/heads/main/sub", "HEAD", check=False).returncode
        )
        repo = self.open_repo()
        self.assertFalse(repo.refs.add_if_new(b"refs/heads/main/sub", self.main))
        self.assertNotIn("refs/heads/main/sub", self.git_refnames("refs/heads/"))

    @unittest.expectedFailure
    def test_tag_ref_written_keeps_peeled_value(self):
        # git stores a ref to an annotated tag with the id it peels to; dulwich stores the
        # tag id alone, then reports it as "known not to peel".
        self.git("tag", "-a", "-m", "annotated", "v1")
        tag = self.git_out("rev-parse", "refs/tags/v1").encode("ascii")
        repo = self.open_repo()
        self.assertTrue(repo.refs.add_if_new(b"refs/tags/copy", tag))
        self.assertEqual(self.main, Repo(self.gitdir).get_peeled(b"refs/tags/copy"))
        self.assertEqual(
            self.main.decode(),
            self.git_out("for-each-ref", "--format=%(*objectname)", "refs/tags/copy"),
        )


class ReftableReadTests(ReftableGitInteropTestCase):
    """Reads of stacks git wrote."""

    @unittest.expectedFailure
    def test_read_ref_of_missing_ref_is_none(self):
        # RefsContainer.read_ref / read_loose_ref promise None for a missing ref.
        repo = self.open_repo()
        self.assertIsNone(repo.refs.read_ref(b"refs/heads/no-such-branch"))

    @unittest.expectedFailure
    def test_get_symrefs_with_unborn_head(self):
        # A fresh repository: HEAD -> refs/heads/main, which does not exist yet.
        fresh = os.path.join(os.path.dirname(self.worktree), "fresh")
        self.git("init", "-q", "--ref-format=reftable", "-b", "main", fresh)
        repo = Repo(fresh)
        self.addCleanup(repo.close)
        self.assertEqual({b"HEAD": b"refs/heads/main"}, repo.refs.get_symrefs())

    @unittest.expectedFailure
    def test_reads_refs_past_first_block(self):
        # 200 tags written by git in one table fill two 4096-byte ref blocks.
        self.git(
            "update-ref", "--stdin",
            stdin=b"".join(b"create refs/tags/t-%04d %s\n" % (i, self.main) for i in range(200)),
        )
        want = {name.encode() for name in self.git_refnames("refs/tags/")}
        self.assertEqual(200, len(want))
        got = {bytes(n) for n in self.open_repo().refs.allkeys() if n.startswith(b"refs/tags/")}
        self.assertEqual(sorted(want), sorted(got))

    @unittest.expectedFailure
    def test_reads_long_names_and_symref_targets(self):
        # git's varint has a bias per continuation byte; a suffix of 16 bytes or more (its
        # length and type share one varint) or a symref target of 128 bytes or more needs
        # two bytes.
        long_name = "refs/heads/" + "l" * 150
        self.git("update-ref", long_name, "HEAD")
        self.git("symbolic-ref", "refs/heads/s", long_name)
        self.git("update-ref", "refs/heads/zz", "HEAD")
        refs = self.open_repo().refs
        self.assertEqual(self.main, refs[long_name.encode()])
        self.assertEqual(b"ref: " + long_name.encode(), refs.read_loose_ref(b"refs/heads/s"))
        self.assertEqual(self.main, refs[b"refs/heads/zz"])
        git_names = set(self.git_refnames())
        dulwich_names = {bytes(n).decode("utf-8", "replace") for n in refs.allkeys()}
        dulwich_names.discard("HEAD")
        self.assertEqual(sorted(git_names), sorted(dulwich_names))


class ReftableReflogTests(ReftableGitInteropTestCase):
    """Reflogs live in the tables' log blocks, not in logs/."""

    @unittest.expectedFailure
    def test_read_reflog_of_git_written_log(self):
        want = self.git_reflog_length("refs/heads/main")
        self.assertEqual(2, want)
        entries = list(self.open_repo().read_reflog(b"refs/heads/main"))
        self.assertEqual(want, len(entries))

    @unittest.expectedFailure
    def test_update_with_message_appends_reflog_entry(self):
        # git update-ref -m MSG appends an entry to the ref's reflog.
        before = self.git_reflog_length("refs/heads/topic")
        repo = self.open_repo()
        self.assertTrue(
            repo.refs.set_if_equals(
                b"refs/heads/topic", self.topic, self.main,
                committer=b"C O Mitter <committer@example.com>",
                timestamp=1700000100, timezone=0, message=b"fast-forward",
            )
        )
        self.assertEqual(self.main.decode(), self.git_out("rev-parse", "refs/heads/topic"))
        self.assertEqual(before + 1, self.git_reflog_length("refs/heads/topic"))
        self.assertEqual(
            "fast-forward", self.git_out("reflog", "show", "-1", "--format=%gs", "refs/heads/topic")
        )


class ReftableStackTests(ReftableGitInteropTestCase):
    """What a dulwich write leaves for the next reader and writer."""

    @unittest.expectedFailure
    def test_batch_update_keeps_git_reflogs(self):
        # A batch rewrites every ref into one table and drops the other tables, and with
        # them every reflog entry git wrote.
        self.assertEqual(2, self.git_reflog_length("refs/heads/main"))
        repo = self.open_repo()
        with repo.refs.batch_update():
            repo.refs.add_if_new(b"refs/heads/other", self.main)
        self.assertIn("refs/heads/other", self.git_refnames("refs/heads/"))
        self.assertEqual(2, self.git_reflog_length("refs/heads/main"))

    @unittest.expectedFailure
    def test_aborted_batch_is_not_written_later(self):
        repo = self.open_repo()
        with self.assertRaises(RuntimeError):
            with repo.refs.batch_update():
                repo.refs.add_if_new(b"refs/heads/abandoned", self.main)
                raise RuntimeError("the caller gives up")
        with repo.refs.batch_update():
            repo.refs.add_if_new(b"refs/heads/wanted", self.main)
        names = self.git_refnames("refs/heads/")
        self.assertIn("refs/heads/wanted", names)
        self.assertNotIn("refs/heads/abandoned", names)

    @unittest.expectedFailure
    def test_later_write_keeps_git_update(self):
        # tables.list is an ordered stack: a new table goes to its end. dulwich rebuilds the
        # list from a sorted directory listing, and its time-based table names sort after
        # git's update-index names, so git's newer table is put below dulwich's older one.
        self.assertTrue(self.open_repo().refs.add_if_new(b"refs/heads/x", self.topic))
        self.git("update-ref", "refs/heads/x", self.main.decode(), self.topic.decode())
        self.assertTrue(self.open_repo().refs.add_if_new(b"refs/heads/y", self.topic))
        self.assertEqual(self.main.decode(), self.git_out("rev-parse", "refs/heads/x"))

    @unittest.expectedFailure
    def test_writes_long_names_and_symref_targets(self):
        long_name = b"refs/heads/" + b"x" * 60
        repo = self.open_repo()
        self.assertTrue(repo.refs.add_if_new(long_name, self.main))
        self.assertEqual(self.main.decode(), self.git_out("rev-parse", long_name.decode()))
        target = b"refs/heads/" + b"l" * 150
        repo.refs.set_symbolic_ref(b"refs/heads/s", target)
        self.assertEqual(target.decode(), self.git_out("symbolic-ref", "refs/heads/s"))
        self.assertIn("refs/heads/main", self.git_refnames())

    @unittest.expectedFailure
    def test_ref_blocks_fit_block_size(self):
        # Format: a block's block_len never exceeds the table's block size; git splits
        # refs over several blocks (and adds an index).
        repo = self.open_repo()
        with repo.refs.batch_update():
            for i in range(200):
                repo.refs.add_if_new(b"refs/tags/t-%04d" % i, self.main)
        stack = os.path.join(self.gitdir, "reftable")
        with open(os.path.join(stack, "tables.list")) as f:
            tables = f.read().split()
        for table in tables:
            with open(os.path.join(stack, table), "rb") as f:
                header = f.read(28)
            # 24-byte header: magic, version, 3-byte block size, ...; then the first
            # block: type byte and 3-byte block_len.
            block_size = struct.unpack(">I", header[4:8])[0] & 0xFFFFFF
            if header[24:25] == b"r" and block_size:
                block_len = int.from_bytes(header[25:28], "big")
                self.assertLessEqual(block_len, block_size, table)
        self.assertEqual(202, len(self.git_refnames()))

    @unittest.expectedFailure
    def test_batch_without_head_stays_readable_by_git(self):
        # Without HEAD the first two records of a table share a prefix; a restart point
        # at the second one (written in part) makes git abort on every read.
        self.git("update-ref", "--no-deref", "-d", "HEAD")
        repo = self.open_repo()
        with repo.refs.batch_update():
            repo.refs.add_if_new(b"refs/heads/b", self.main)
        listed = self.git("for-each-ref", "--format=%(refname)", check=False)
        self.assertEqual(0, listed.returncode, listed.stderr)
        self.assertIn(b"refs/heads/b", listed.stdout.split())
        self.assertEqual(self.main.decode(), self.git_out("rev-parse", "--verify", "refs/heads/b"))



class ReftableDamageTests(ReftableGitInteropTestCase):
    """A damaged table must be refused, not read as a smaller set of refs."""

    def damaged(self, edit):
        # Pack every ref into one table, then change bytes of its first block.
        for i in range(6):
            self.git("update-ref", "refs/heads/b%d" % i, "HEAD")
        self.git("pack-refs", "--all")
        stack = os.path.join(self.gitdir, "reftable")
        with open(os.path.join(stack, "tables.list")) as f:
            (table,) = f.read().split()
        path = os.path.join(stack, table)
        with open(path, "rb") as f:
            data = bytearray(f.read())
        header = 24 if data[4] == 1 else 28
        edit(data, header)
        with open(path, "wb") as f:
            f.write(bytes(data))

    @unittest.expectedFailure
    def test_reserved_value_type_is_an_error(self):
        # The first record (HEAD) gets value type 5, which the format reserves: git and
        # other readers refuse the table; dulwich ends the block there and lists no refs.
        def reserved(data, header):
            data[header + 5] = (data[header + 5] & ~7) | 5

        self.damaged(reserved)
        with self.assertRaises(Exception):
            self.open_repo().refs.allkeys()

    @unittest.expectedFailure
    def test_block_length_below_its_records_is_an_error(self):
        # The first block's length cut to 24 bytes past the block header: its records and
        # restart table no longer fit, and the table must be refused.
        def short(data, header):
            data[header + 1:header + 4] = (header + 28).to_bytes(3, "big")

        self.damaged(short)
        with self.assertRaises(Exception):
            self.open_repo().refs.allkeys()


if __name__ == "__main__":
    unittest.main()
