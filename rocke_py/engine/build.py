"""Mode `ir`'s builder: one implicit-GEMM kernel from a validated spec (docs/kernels.md).

Twin of rocke_c/src/build.c. The direction modules supply params, block decode and
descriptors; build_common the rest. The built kernel is verified and at most its size bound
(limits.kernel_ops_bound, never more than MAX_KERNEL_OPS); a failure is an engine bug."""

from __future__ import annotations

from . import build_dgrad, build_fwd, build_wgrad
from .arch import Target
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
    load_vectors,
    make_rsrcs,
    thread_prologue,
    wave_tile,
)
from .ir import Kernel
from .limits import MAX_KERNEL_OPS, kernel_ops_bound
from .problem import ConvProblem
from .result import EngineFailure
from .spec import ConvSpec, unrolled_k_iters
from .verify import verify_kernel

FAMILIES = {"fwd": build_fwd, "wgrad": build_wgrad, "dgrad": build_dgrad}


def build_kernel(spec: ConvSpec, problem: ConvProblem, target: Target) -> Kernel:
    family = FAMILIES[spec.family]
    kc = begin_kernel(spec, problem, target)
    # validation kept the bound within MAX_KERNEL_OPS; an op past it is an engine failure
    kc.b.op_limit = min(kernel_ops_bound(spec, problem, target).total, MAX_KERNEL_OPS)
    family.add_params(kc)
    thread_prologue(kc)
    family.block_decode(kc)
    make_rsrcs(kc, family.NAMES, with_d=not spec.atomic_split_k)
    ops = family.operands(kc)
    wt = wave_tile(kc)
    plan = frag_plan(kc, wt, ops.ta, ops.tb)
    if spec.unroll_k:
        accs = k_loop_unrolled(kc, ops, wt, plan, unrolled_k_iters(spec, problem))
    elif spec.pipeline == "basic":
        accs = k_loop_basic(kc, ops, wt, plan, unrolled_k_iters(spec, problem))
    elif spec.async_dma:
        accs = k_loop_async(kc, ops, wt, plan, unrolled_k_iters(spec, problem))
    else:
        accs = k_loop_runtime(kc, ops, wt, plan)
    if spec.epilogue == "cshuffle":
        exclusive = spec.family != "dgrad" or spec.cshuffle_no_alias
        epilogue_cshuffle(kc, accs, wt, family.desc_d, load_vectors(kc)[2], exclusive)
    else:
        epilogue_default(kc, accs, wt, family.desc_d)
    kernel = finish(kc)
    problem_text = verify_kernel(kernel)
    if problem_text is not None:
        raise EngineFailure(f"verifier: {problem_text}")
    return kernel
