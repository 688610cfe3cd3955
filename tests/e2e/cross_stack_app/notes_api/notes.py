def note_item(event):
    return {"user_id": event["user_id"], "note_id": event["note_id"], "text": event["text"].strip()}
