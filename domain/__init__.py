"""The domain: the law's acts, its aggregates and their events."""

#: The start of the topic of every event and aggregate class of tramita: each lives, and has always lived, in this
#: package (a moved class's old topic names its old module here too: domain/numbering.py). A stored topic naming a
#: module elsewhere is no class of tramita, and that module is never imported to find out: resolving a topic imports
#: its module, which runs that module's code (`tramita.__main__` would run the command line).
EVENT_PACKAGE = f"{__name__}."


def domain_topic(topic: object) -> bool:
    """Does this stored topic name a class of the domain (`EVENT_PACKAGE`), so that it may be resolved?"""
    return isinstance(topic, str) and topic.startswith(EVENT_PACKAGE)
