#!/usr/bin/env python3
"""dulwich writes every ref of a table into one ref block, however large: a batch of 200
refs makes a block of about 5 KiB in a table whose header says block_size 4096; the format
says block_len "is always less than or equal to the file's block size"
(ReftableWriter._write_ref_blocks, RefBlock.encode; no index, no second block).

The table's own header and first block header are read with the standard library.
Exit 1 while the defect shows.
"""
import os
import struct

from _repo import dulwich_repo, reftable_repo, verdict

Repo, version = dulwich_repo()
git, gitdir = reftable_repo()
r = Repo(gitdir)
main = r.refs[b"refs/heads/main"]
with r.refs.batch_update():
    for i in range(200):
        r.refs.add_if_new(b"refs/tags/t-%04d" % i, main)
stack = os.path.join(gitdir, "reftable")
names = open(os.path.join(stack, "tables.list")).read().split()
worst = None
for name in names:
    data = open(os.path.join(stack, name), "rb").read()
    block_size = struct.unpack(">I", data[4:8])[0] & 0xFFFFFF
    if data[24:25] == b"r":
        block_len = int.from_bytes(data[25:28], "big")
        if block_size and block_len > block_size:
            worst = (name, block_len, block_size)
verdict(worst is not None,
        f"dulwich {version}: " + (f"{worst[0]}: ref block_len {worst[1]} > block_size {worst[2]}"
                                  if worst else "every ref block fits the block size"))
