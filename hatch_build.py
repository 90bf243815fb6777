"""The wheel's build step: compile ddx/replay/chainloop.c, the loop of ddx/replay/chain.py.

Optional: where there is no C compiler or no Python headers, the wheel is built without it
and ddx replays the same sums op by op through numpy (the same bits, more time per call).
The flags keep IEEE arithmetic as numpy's loops do it: no fast-math, and no contraction of a
multiply and an add into one rounding."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sysconfig
import tempfile
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCE = Path("ddx") / "replay" / "chainloop.c"
FLAGS = ["-O3", "-fPIC", "-shared", "-std=c99", "-ffp-contract=off", "-fno-fast-math"]


def compile_chain(root: Path, out: Path) -> bool:
    """Compile the loop into ``out``; whether it worked (the reason goes to stderr)."""
    if os.environ.get("DDX_NO_C"):
        return False
    cc = shlex.split(sysconfig.get_config_var("CC") or "cc")
    include = sysconfig.get_paths()["include"]
    cmd = [*cc, *FLAGS, f"-I{include}", str(root / SOURCE), "-o", str(out), "-lm"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.SubprocessError) as e:
        print(f"ddx: not compiling {SOURCE} ({e}); numpy replays instead")
        return False
    if done.returncode != 0:
        print(f"ddx: {SOURCE} did not compile; numpy replays instead:\n{done.stderr}")
        return False
    return True


class CustomBuildHook(BuildHookInterface):
    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel":
            return
        root = Path(self.root)
        name = "chainloop" + (sysconfig.get_config_var("EXT_SUFFIX") or ".so")
        if version == "editable":  # (the source tree is imported: the module goes beside it)
            compile_chain(root, root / SOURCE.with_name(name))
            return
        self._scratch = tempfile.mkdtemp(prefix="ddx-build-")
        out = Path(self._scratch) / name
        if compile_chain(root, out):
            build_data["pure_python"] = False
            build_data["infer_tag"] = True
            build_data["force_include"][str(out)] = str(SOURCE.with_name(name))

    def finalize(self, version: str, build_data: dict, artifact_path: str) -> None:
        scratch = getattr(self, "_scratch", None)
        if scratch is not None:  # (the compiled module is in the wheel now)
            shutil.rmtree(scratch, ignore_errors=True)
