"""Runs the lit/FileCheck suite (tests/filecheck) so that `pytest` covers it too.

One pytest test for the whole suite: lit runs its tests in parallel itself, and its output
(which tests failed, and FileCheck's explanation) is the failure message.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SUITE = Path(__file__).parent / "filecheck"


def test_filecheck_suite() -> None:
    result = subprocess.run(
        # lit has no `__main__`; its console script calls `lit.main.main()`.
        [sys.executable, "-c", "import lit.main; lit.main.main()", "-q", "-v", str(SUITE)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert result.returncode == 0, f"lit failed:\n{result.stdout}\n{result.stderr}"
