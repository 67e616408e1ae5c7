"""The build step: floods its output, drives the terminal if shown raw, then fails."""

import sys

out = sys.stdout.buffer
out.write(b"\x1b]0;pwned\x07\x1b[2J" + b"x" * (8 << 20) + b"\n")  # one 8 MB line
for i in range(20_000):
    out.write(b"error: line %d of a build that never stops talking\n" % i)
out.write(b"\x1b[31mfatal: the last line\x1b[0m\n")
out.flush()
sys.exit(3)
