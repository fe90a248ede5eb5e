"""The cshuffle epilogue's last read pass when the block has more lanes than the staging tile
has chunks (a 16x16 tile of fp16 in runs of 8 is 32 chunks for 64 lanes): the lanes past the
last chunk must read inside the staging tile and store nothing. Found by `fuzz --numerics`;
before the fix both engines read rows 16..31 of a 16-row tile (an lds-bounds hazard)."""

from __future__ import annotations

import pytest

from rocke_py.numerics.check import check_config, emit_text

CONFIG = """[target]
arch = "{arch}"
[problem]
N = 1
Hi = 1
Wi = 1
C = 1
K = 8
Y = 1
X = 1
[spec]
family = "{family}"
tile_m = 16
tile_n = 16
warp_m = 1
warp_n = 1
warp_tile_m = 16
warp_tile_n = 16
epilogue = "cshuffle"
"""


@pytest.mark.parametrize("family", ["fwd", "dgrad"])
@pytest.mark.parametrize("engine", ["py", "c"])
def test_lanes_past_the_last_chunk_stay_inside_the_staging_tile(family: str, engine: str) -> None:
    text = CONFIG.format(arch="gfx942", family=family)
    out = check_config(family, text, engine=engine)
    assert out.error is None and out.hazards == () and out.ok, out
    assert "arith.select" in emit_text(text, "ir", engine)
