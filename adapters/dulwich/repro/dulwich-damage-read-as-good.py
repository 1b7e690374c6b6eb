#!/usr/bin/env python3
"""dulwich reads a damaged table as good: RefBlock.decode stops at the first record it cannot
decode (the ValueError is swallowed as "padding or invalid data"), and ReftableReader reads
a block's declared length without checking it against the header, the block size or the
restart table. A ref record with a reserved value type, or a block length cut below the
block's records, loses every ref after it without an error. Our reader rejects both tables
(`reftable verify`: "cannot decode", "restart count"); git 2.47.3 dies on both (a git defect
of its own, fixed by its reftable hardening after v2.55.0).

git makes a repository with a few refs and packs them into one table; two copies of it are
damaged, one in the first record's value type, one in the first block's length. Exit 1
while dulwich reads either copy without an error and with other refs than git wrote.
"""
import os
import shutil

from _repo import dulwich_repo, reftable_repo, verdict

Repo, version = dulwich_repo()
git, gitdir = reftable_repo()
for i in range(6):
    git.run("update-ref", f"refs/heads/b{i}", "HEAD")
git.run("pack-refs", "--all")
want = set(git.out("for-each-ref", "--format=%(refname)").split())
stack = os.path.join(gitdir, "reftable")
tables = open(os.path.join(stack, "tables.list")).read().split()
assert len(tables) == 1, tables


def damaged_copy(name, edit):
    """A copy of the repository whose only table `edit` changed (bytes in, bytes out)."""
    copy = os.path.join(os.path.dirname(os.path.dirname(gitdir)), name)
    shutil.copytree(os.path.dirname(gitdir), copy, symlinks=True)
    path = os.path.join(copy, ".git", "reftable", tables[0])
    data = bytearray(open(path, "rb").read())
    edit(data, 24 if data[4] == 1 else 28)
    open(path, "wb").write(bytes(data))
    return os.path.join(copy, ".git")


def reserved_type(data, header):
    # The block: 'r', a 3-byte length, then the first record: prefix length 0, then
    # (suffix length << 3 | value type) in one byte for HEAD.
    at = header + 4 + 1
    data[at] = (data[at] & ~7) | 5


def short_block(data, header):
    data[header + 1:header + 4] = (header + 4 + 24).to_bytes(3, "big")


def read(gitdir):
    """dulwich's refs of a repository, or the error it raised."""
    try:
        return set(bytes(n).decode() for n in Repo(gitdir).refs.allkeys()) - {"HEAD"}, None
    except Exception as e:  # any error is an answer: the table is damaged
        return None, e


shown = []
for name, edit in [("value-type", reserved_type), ("block-length", short_block)]:
    got, err = read(damaged_copy(name, edit))
    if err is None and got != want:
        shown.append(f"{name}: read as good, {len(got)} refs of {len(want)} "
                     f"(missing {sorted(want - got)[:3]})")
verdict(bool(shown), f"dulwich {version}: " + ("; ".join(shown) or "both damaged tables refused"))
