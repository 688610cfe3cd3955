"""The IoT telemetry data model: sensors, their sites, and time-bucketed readings.

Item collections on the table (no secondary index):

* ``SENSOR#{sensor_id}`` / ``META``: a sensor's metadata (site, kind, unit).
* ``SITE#{site_id}`` / ``SENSOR#{sensor_id}``: the site's sensor list — a small copy of the
  metadata written in the same transaction as the sensor (an adjacency list, instead of a GSI).
* ``SENSOR#{sensor_id}#{ts:month}`` / ``{ts}``: one sensor's readings of one calendar month
  (UTC), in time order. The month bucket caps a partition's size and keeps one sensor's
  history from growing one partition forever; the sort key is the ISO-8601 UTC timestamp, so
  a time range is one key-range Query per month it touches.

Readings expire through the table's TTL attribute ``expires_at``, set at ingest to the
reading's own timestamp plus :data:`RETENTION` (the runtime's ``expiry`` helper).
"""

from __future__ import annotations

from datetime import timedelta

from constructs_lib.model import AccessPattern, Entity, Field, Model

#: How long a reading is kept after it was taken (its TTL).
RETENTION = timedelta(days=30)
#: Time bucket of the readings' partition key (``{ts:month}``).
BUCKET = "month"

iot_model = Model(
    "iot",
    entities=[
        Entity(
            "Sensor",
            pk="SENSOR#{sensor_id}",
            sk="META",
            fields={"sensor_id": "string"},
            required=("site_id", "kind", "unit"),
            description="A sensor's metadata, read by id.",
        ),
        Entity(
            "SiteSensor",
            pk="SITE#{site_id}",
            sk="SENSOR#{sensor_id}",
            fields={"site_id": "string", "sensor_id": "string"},
            required=("kind", "unit"),
            description="A sensor listed under its site (written with the Sensor item, in one transaction).",
        ),
        Entity(
            "Reading",
            pk="SENSOR#{sensor_id}#{ts:" + BUCKET + "}",
            sk="{ts}",
            fields={"sensor_id": "string", "ts": Field.timestamp()},
            required=("value",),
            description="One measurement; partitioned by sensor and month, sorted by time, expiring via TTL.",
        ),
    ],
    access_patterns=[
        AccessPattern("sensor metadata", entity="Sensor", sk="="),
        AccessPattern("sensors of a site", entity="SiteSensor", sk="begins_with"),
        AccessPattern("readings of a sensor in a month", entity="Reading"),
        AccessPattern("readings of a sensor in a time range", entity="Reading", sk="between"),
    ],
    ttl_attribute="expires_at",
)
