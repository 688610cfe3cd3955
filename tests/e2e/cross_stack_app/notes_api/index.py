from notes import note_item

from constructs_lib.runtime import TableClient

table = TableClient.from_environment()


def handler(event, context):
    table.put("Note", note_item(event))
    page = table.query("notes of a user", user_id=event["user_id"])
    return {"notes": [n["text"] for n in page.items], "table": table.table_name}
