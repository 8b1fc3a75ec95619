"""pymilvus imported without pandas and requests, for a process that asks a question and exits (`cairn query`,
`cairn status`): about 0.9 s of CPU of the 3 s such a command took.

pymilvus's package imports its ORM layer whatever one uses of it, and MilvusClient's own modules import it too
(pymilvus/orm/{collection,schema,types,prepare,partition}.py), each with `import pandas` at module level (0.5-0.8 s);
pymilvus/client/global_topology.py imports `requests` (0.2 s with ssl, urllib3 and charset detection) for the global
endpoints of a managed cluster. Cairn never hands pymilvus a DataFrame, uses no filter templates and asks no global
endpoint: the only paths on which pymilvus reads either.

`import_pymilvus` imports pymilvus with stand-ins for `pandas`, `pandas.api`, `pandas.api.types` and `requests` in
sys.modules for the length of that import only. A stand-in reads each attribute when it is used: from the real
module if it has been imported since (then pymilvus sees pandas' own classes and functions, as it always did), else
the real module is imported then and read. Two things pymilvus reads at import time are answered without importing
pandas: `DataFrame` and `Series` (in its annotations and isinstance checks) are, while pandas is not imported, a
class nothing is an instance of (no object can be a DataFrame before pandas is imported), and the functions it
imports from pandas.api.types import pandas when they are called.

A pymilvus that reads anything else of a stand-in while it is imported (a later version) makes the stand-in raise,
and pymilvus is imported again with the real modules, as it would be without Cairn (tests/integration/
test_cli_imports.py notices when the deferral stops deferring).
"""

from __future__ import annotations

import importlib
import sys
import threading
from types import ModuleType
from typing import Any

DEFERRED = ("pandas", "pandas.api", "pandas.api.types", "requests")
# What pymilvus reads of pandas at import time: classes named in its annotations and isinstance checks, and the
# functions it imports from pandas.api.types (orm/types.py, orm/schema.py; called on DataFrame and filter-template
# paths only).
CLASSES = frozenset({"DataFrame", "Series"})
FUNCTIONS = frozenset({"infer_dtype", "is_array_like", "is_float", "is_list_like", "is_scalar"})
SUBMODULES = {"pandas": "api", "pandas.api": "types"}  # `from pandas.api.types import ...` reads these

_importing = threading.Event()  # set while pymilvus imports with the stand-ins in place
_lock = threading.Lock()


class ReadTooEarly(ImportError):
    """pymilvus read something of a deferred module that it has no stand-in for, while it was imported."""


def _real(name: str) -> ModuleType:
    """The real module `name`, imported now if it is not yet."""
    module = sys.modules.get(name)
    if module is None or isinstance(module, StandIn):
        if _importing.is_set():
            raise ReadTooEarly(f"pymilvus read {name} while it was imported")
        module = importlib.import_module(name)
    return module


def _no_instances(name: str) -> type:
    """A class no object is an instance of: pandas' `name` before pandas is imported."""
    return type(name, (), {"__module__": __name__, "__doc__": f"pandas.{name} while pandas is not imported"})


_PLACEHOLDERS = {name: _no_instances(name) for name in CLASSES}


def _deferred_function(name: str) -> Any:
    """pandas.api.types.`name`, pandas imported when it is first called."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(_real("pandas.api.types"), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    return call


class StandIn(ModuleType):
    """A deferred module as pymilvus holds it: each attribute read from the real module when it is used."""

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        name = self.__name__
        real = sys.modules.get(name)
        if real is not None and not isinstance(real, StandIn):  # imported since: its own
            return getattr(real, attribute)
        if name == "pandas" and attribute in CLASSES:
            return _PLACEHOLDERS[attribute]
        if name == "pandas.api.types" and attribute in FUNCTIONS:
            return _deferred_function(attribute)
        if _importing.is_set() and SUBMODULES.get(name) == attribute:
            return sys.modules[f"{name}.{attribute}"]
        return getattr(_real(name), attribute)


def import_pymilvus() -> ModuleType:
    """pymilvus, imported now without importing pandas or requests (as it is when it, pandas or requests is
    imported already)."""
    with _lock:
        if any(name in sys.modules for name in ("pymilvus", "pandas", "requests")):
            return importlib.import_module("pymilvus")
        stand_ins = {name: StandIn(name) for name in DEFERRED}
        sys.modules.update(stand_ins)
        _importing.set()
        try:
            return importlib.import_module("pymilvus")
        except ReadTooEarly:
            for name in [n for n in sys.modules if n == "pymilvus" or n.startswith("pymilvus.")]:
                del sys.modules[name]  # its modules hold stand-ins it cannot use: imported again, with the real ones
        finally:
            _importing.clear()
            for name, module in stand_ins.items():
                if sys.modules.get(name) is module:
                    del sys.modules[name]
    return importlib.import_module("pymilvus")
