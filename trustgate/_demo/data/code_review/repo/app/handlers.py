"""HTTP handlers for the orders service."""

import json

from app.validation import validate_order


def create_order(event):
    if not event.get("body"):
        return {"status": 400, "error": "empty body"}
    try:
        payload = json.loads(event["body"])
    except json.JSONDecodeError:
        return {"status": 400, "error": "body is not JSON"}
    errors = validate_order(payload)
    if errors:
        return {"status": 422, "errors": errors}
    return {"status": 201, "order": payload}
