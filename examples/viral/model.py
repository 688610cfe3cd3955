"""The viral-video data model: videos, and (beside them, owned by ``ShardedCounter``) view counters.

Items on the table:

* ``VIDEO#{video_id}`` / ``VIDEO``: a video's metadata (title, channel). Read by id.
* ``COUNTER#video_views#...``: the ``video_views`` counter family's shard, increment (one per
  request id) and total items. They are not entities of this model: the ``ShardedCounter``
  construct claims the ``COUNTER#video_views#`` key prefix on the table (and refuses a model
  entity that could build the same keys); ``CounterClient`` and the aggregator write them.

The TTL attribute ``expires_at`` is what makes idempotent views possible: each request id
leaves an increment item that expires after the counter's idempotency window.
"""

from __future__ import annotations

from constructs_lib.model import AccessPattern, Entity, Model

#: The counter family of views, one counter per video id.
VIEWS_FAMILY = "video_views"

viral_model = Model(
    "viral",
    entities=[
        Entity(
            "Video",
            pk="VIDEO#{video_id}",
            sk="VIDEO",
            fields={"video_id": "string"},
            required=("title", "channel_id"),
            description="A published video; its view count lives in the video_views counter family.",
        ),
    ],
    access_patterns=[AccessPattern("video by id", entity="Video", sk="=")],
    ttl_attribute="expires_at",
)
