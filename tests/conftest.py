"""What every test shares: the import path, and one fixture per way a test runs the C engine.

The ways of running the C engine, each with one home (the layout: tests/engines/, one engine's
semantics; tests/harness/, the parity harness; tests/parity/, both engines compared;
tests/repository/, checks over the whole repository; tests/support/ the helpers, layout.REPO
the repository root):

  in process      rocke_py.cbridge (the cffi module); tests/support/two_engines.py's both() runs it beside
                  the Python engine and asserts they agree
  rocke_emit      rocke-emit (rocke_c/cli/rocke-emit.c), the engine as a program
  emit_driver     rocke_c/tests/emit_driver.c, length-prefixed records for many files
  sanitized_emit_driver   the same under AddressSanitizer + UBSan (tests/support/sanitized_driver.py)
  sanitized_build_driver  rocke_c/tests/build_driver.c (mode ir/ll), sanitized (tests/tools/compare_ir.py)
  ir_driver       rocke_c/tests/ir_driver.c, builder scripts through the IR core, sanitized
  lower_driver    rocke_c/tests/lower_driver.c, builder scripts lowered to LLVM IR, sanitized;
                  lower_oom (rocke_c/tests/lower_oom.c) the same under allocation failure
  parser_cases    rocke_c/tests/parser_cases.c, the parser cases (tests/data/parser_cases/) through
                  the C engine's input stages, sanitized

Each program fixture is session-scoped and compiled by tests/tools/cbuild.py with CMakeLists.txt's
flags, each engine unit and program once per content into a cache every xdist worker and run
shares, then placed in the worker's tmp_path_factory; it skips
without a compiler, or for a sanitized build without the sanitizer runtime. (ctest runs
rocke_c/tests/test_*.c, the C unit tests, from the CMake build.)"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_TESTS = Path(__file__).resolve().parent
for _dir in ("support", "tools", "standins"):
    if str(_TESTS / _dir) not in sys.path:
        sys.path.insert(0, str(_TESTS / _dir))

import cbuild  # noqa: E402
import suite_order  # noqa: E402


def build_or_skip(tmp_path_factory: pytest.TempPathFactory, main: str, **kw) -> Path:
    """cbuild.build into a fresh directory of this session; a skip without a compiler or a
    sanitizer runtime, a failure when the program does not compile."""
    name = kw.get("name") or Path(main).stem
    try:
        return cbuild.build(main, tmp_path_factory.mktemp(name), **kw)
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    except cbuild.BuildError as exc:
        if kw.get("sanitize") and exc.no_sanitizer_runtime:
            pytest.skip(f"the sanitizer runtime is not available here: {str(exc)[-300:]}")
        pytest.fail(f"{main} does not compile:\n{exc}")


@pytest.fixture(scope="session")
def rocke_emit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """rocke-emit, -O2 (test_kernel_limits times it)."""
    return build_or_skip(tmp_path_factory, "rocke_c/cli/rocke-emit.c", opt="-O2", name="rocke-emit")


@pytest.fixture(scope="session")
def emit_driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_or_skip(tmp_path_factory, "rocke_c/tests/emit_driver.c")


@pytest.fixture(scope="session")
def sanitized_emit_driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_or_skip(tmp_path_factory, "rocke_c/tests/emit_driver.c", sanitize=True, name="emit_driver_san")


@pytest.fixture(scope="session")
def sanitized_build_driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_or_skip(tmp_path_factory, "rocke_c/tests/build_driver.c", sanitize=True, name="build_driver_san")


@pytest.fixture(scope="session")
def ir_driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_or_skip(tmp_path_factory, "rocke_c/tests/ir_driver.c", sanitize=True)


@pytest.fixture(scope="session")
def lower_driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Linked against the engine as a library: it takes the IR core and the lowering only."""
    return build_or_skip(tmp_path_factory, "rocke_c/tests/lower_driver.c", sanitize=True, as_library=True)


@pytest.fixture(scope="session")
def lower_oom(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_or_skip(
        tmp_path_factory,
        "rocke_c/tests/lower_oom.c",
        sanitize=True,
        as_library=True,
        extra=("-Wl,--wrap=malloc", "-Wl,--wrap=realloc"),
    )


@pytest.fixture(scope="session")
def parser_cases(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Linked against the engine as a library, as CMake's parser_cases target is."""
    return build_or_skip(tmp_path_factory, "rocke_c/tests/parser_cases.c", sanitize=True, as_library=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    suite_order.longest_first(items, Path(str(config.rootpath)))
