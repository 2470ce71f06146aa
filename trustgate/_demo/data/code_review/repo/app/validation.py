"""Order validation rules."""

MAX_QUANTITY = 100


def validate_order(payload):
    errors = []
    if "sku" not in payload:
        errors.append("sku is required")
    quantity = payload.get("quantity", 0)
    if not isinstance(quantity, int) or quantity < 1:
        errors.append("quantity must be a positive integer")
    elif quantity > MAX_QUANTITY:
        errors.append(f"quantity must be at most {MAX_QUANTITY}")
    return errors
