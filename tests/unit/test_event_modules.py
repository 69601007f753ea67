"""A reader finds a stored event's class by its topic (`domain.events.event_class`), which imports
the module declaring that kind of event on first need: every topic this version records is
found so, whichever modules a process imported before."""

from __future__ import annotations

import json
import subprocess
import sys

from mindledger.domain.event_types import known_event_types, stream_kind
from mindledger.domain.events import EVENT_MODULES, event_class
from tests.conftest import REPO


def test_each_kind_names_the_module_declaring_its_events() -> None:
    found = {(stream_kind(topic), cls.__module__) for topic, cls in known_event_types().items()}

    assert found == set(EVENT_MODULES.items())
    assert all(event_class(topic) is cls for topic, cls in known_event_types().items())
    assert event_class("mind.nothing.happened") is None


def test_a_fresh_process_finds_a_topic_whose_module_it_has_not_imported() -> None:
    program = (
        "import json, sys\n"
        "from mindledger.domain.events import event_class\n"
        "before = 'mindledger.domain.foreign_import' in sys.modules\n"
        "cls = event_class('mind.import.record_kept')\n"
        "print(json.dumps([before, cls.__module__, sorted(cls.SEALED)]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", program], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout

    before, module, sealed = json.loads(out)
    assert (before, module) == (False, "mindledger.domain.foreign_import")
    assert sealed
