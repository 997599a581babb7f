"""Kafka Connect's topic creation for source connectors (KIP-158): the `topic.creation.*` properties.

Kafka Connect creates a topic the first time a task sends a record to it, when the topic does not exist yet,
with the settings of the first group (in `topic.creation.groups` order) whose `include` regexes match the whole
topic name and whose `exclude` regexes do not, else of the `default` group, which matches every topic. pgcdc does
the same in front of its Kafka sink (sink.py), for every topic it writes records to (changes, heartbeats,
transaction metadata); the Kafka offset store creates its own compacted topic (offsets/kafka.py).

    creation, problems, ignored = parse(props)     # config.py: None when no topic.creation.* property is set
    sink = TopicCreatingSink(sink, creation, client_conf, timeout_s)
"""

from pgcdc.topic_creation.config import Group, TopicCreation, parse

__all__ = ["Group", "TopicCreation", "parse"]
