"""ascend-audit: layered go-live readiness audit for Ascend NPU inference nodes."""

import os as _os

__version__ = "0.1.0"

# In a source checkout, `checks/`, `reports/` and `examples/` sit beside this package and are
# installed as its subpackages; let them import the same way when the checkout runs uninstalled.
_root = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if _os.path.isfile(_os.path.join(_root, "pyproject.toml")) and _os.path.isfile(
    _os.path.join(_root, "checks", "__init__.py")
):
    __path__.append(_root)
