"""The in-process store (`memory://`): the library's, with an aggregate's later events found by version.

The library's in-process recorder answers "the events of this aggregate after version v" by walking every version
the aggregate has, so a read of the newest events cost more the longer the aggregate's history: each act on a long
case paid for the whole case. The versions of an aggregate are consecutive from 1, so those after v are found by
looking up v+1, v+2, ... until one is missing, as the databases' indexes find them.
"""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

from eventsourcing.persistence import ApplicationRecorder, StoredEvent
from eventsourcing.popo import POPOApplicationRecorder, POPOFactory


class IndexedMemoryRecorder(POPOApplicationRecorder):
    """The library's in-process recorder; its reads of an aggregate's events after a version look them up."""

    def select_events(self, originator_id: UUID | str, *, gt: int | None = None, lte: int | None = None,
                      desc: bool = False, limit: int | None = None) -> Sequence[StoredEvent]:
        if desc or lte is not None or limit is not None:
            return super().select_events(originator_id, gt=gt, lte=lte, desc=desc, limit=limit)
        with self._database_lock:
            index = self._stored_events_index.get(str(originator_id), {})
            if gt is None:  # all its events: those after version 0, unless it has one numbered 0 or less
                if index and (next(iter(index)) < 1 or 0 in index):
                    return super().select_events(originator_id)
                gt = 0
            found, version = [], gt + 1
            while version in index:
                found.append(self._stored_events[index[version]])
                version += 1
            newest = next(reversed(index), None)
            if newest is not None and newest > gt and (not found or found[-1].originator_version != newest):
                return super().select_events(originator_id, gt=gt)  # versions with a gap: walk them all
            return found


class MemoryFactory(POPOFactory):
    """The library's in-process factory, with `IndexedMemoryRecorder`."""

    def application_recorder(self) -> ApplicationRecorder:
        return IndexedMemoryRecorder()
