"""Mode `ir`'s builder: one implicit-GEMM kernel from the plan of a validated spec (docs/kernels.md).

Twin of rocke_c/src/build.c. The direction modules supply params, block decode and
descriptors; build_common the rest. The built kernel is verified and at most its size bound
(the plan's op_limit: limits.kernel_ops_bound, never more than MAX_KERNEL_OPS); a failure is an
engine bug."""

from __future__ import annotations

from . import build_dgrad, build_fwd, build_wgrad
from .build_common import (
    begin_kernel,
    epilogue_cshuffle,
    epilogue_default,
    finish,
    frag_plan,
    k_loop_async,
    k_loop_basic,
    k_loop_runtime,
    k_loop_unrolled,
    make_rsrcs,
    thread_prologue,
    wave_tile,
)
from .ir import Kernel
from .plan import Plan
from .result import EngineFailure
from .verify import verify_kernel

FAMILIES = {"fwd": build_fwd, "wgrad": build_wgrad, "dgrad": build_dgrad}


def build_kernel(plan: Plan) -> Kernel:
    spec = plan.spec
    family = FAMILIES[spec.family]
    kc = begin_kernel(plan)
    family.add_params(kc)
    thread_prologue(kc)
    family.block_decode(kc)
    make_rsrcs(kc, family.NAMES, with_d=not spec.atomic_split_k)
    ops = family.operands(kc)
    wt = wave_tile(kc)
    frags = frag_plan(kc, wt, ops.ta, ops.tb)
    if spec.unroll_k:
        accs = k_loop_unrolled(kc, ops, wt, frags, plan.k_iters)
    elif spec.pipeline == "basic":
        accs = k_loop_basic(kc, ops, wt, frags, plan.k_iters)
    elif spec.async_dma:
        accs = k_loop_async(kc, ops, wt, frags, plan.k_iters)
    else:
        accs = k_loop_runtime(kc, ops, wt, frags)
    if spec.epilogue == "cshuffle":
        exclusive = spec.family != "dgrad" or spec.cshuffle_no_alias
        epilogue_cshuffle(kc, accs, wt, family.desc_d, plan.vectors[2], exclusive)
    else:
        epilogue_default(kc, accs, wt, family.desc_d)
    if spec.family == "dgrad":
        build_dgrad.zero_untouched(kc)
    kernel = finish(kc)
    problem_text = verify_kernel(kernel)
    if problem_text is not None:
        raise EngineFailure(f"verifier: {problem_text}")
    return kernel
