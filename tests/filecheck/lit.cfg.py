"""lit configuration for picograd's FileCheck tests.  Run:  lit -v tests/filecheck

Substitutions usable in RUN lines:
    opt-tool      picograd's driver (`python -m picograd.tools.opt_tool`)
    %roundtrip    reads IR on stdin, prints it generic, parses that and prints it custom:
                  `opt-tool %s | %roundtrip | filecheck %s` checks custom -> generic -> custom
    %python       the Python running lit
"""

import os
import sys

import lit.formats

config.name = "picograd"  # noqa: F821 (lit injects `config`)
config.test_format = lit.formats.ShTest(execute_external=False)  # noqa: F821
config.suffixes = [".mlir", ".py"]  # noqa: F821
config.excludes = ["Inputs", "lit.cfg.py"]  # noqa: F821
config.test_source_root = os.path.dirname(__file__)  # noqa: F821

repo = os.path.dirname(os.path.dirname(config.test_source_root))  # noqa: F821
opt = f"{sys.executable} -m picograd.tools.opt_tool"

# Substitutions are regular expressions applied in order, after lit's own (%s, %t, ...):
# match `opt-tool` only as a command word, never inside a path that contains it.
config.substitutions.append(("%roundtrip", f"{opt} --print-op-generic | {opt}"))  # noqa: F821
config.substitutions.append((r"(?<![\w./-])opt-tool(?![\w./-])", opt))  # noqa: F821
config.substitutions.append(("%python", sys.executable))  # noqa: F821

# The checkout under test, even where picograd is not installed; filecheck next to python.
config.environment["PYTHONPATH"] = os.pathsep.join(  # noqa: F821
    p for p in (repo, os.environ.get("PYTHONPATH", "")) if p
)
config.environment["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]  # noqa: F821
