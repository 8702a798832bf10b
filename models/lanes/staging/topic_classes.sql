-- name: topic_classes
-- version: 1
-- stage: evaluate
-- grain: corpus, topic, class
-- audits:
-- description: The classes a lanes topic maps to (a BANKING77 group's intents), read through the gate (a table, so that nothing in the warehouse refers to the labels file once it is detached again).
SELECT corpus, topic, class
FROM gate.topic_classes
