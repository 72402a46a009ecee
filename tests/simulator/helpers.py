"""Request helpers shared by the simulator tests."""

import httpx


async def charge(
    client: httpx.AsyncClient, order_key: str, key: str, amount: str = "10.00",
    currency: str = "EUR",
) -> httpx.Response:
    return await client.post(
        "/payments",
        json={"orderId": order_key, "amount": amount, "currency": currency},
        headers={"Idempotency-Key": key},
    )


async def ship(client: httpx.AsyncClient, order_key: str, key: str) -> httpx.Response:
    return await client.post(
        "/shipments",
        json={"orderId": order_key, "lines": [{"sku": "SKU-1", "quantity": 2}],
              "address": {"line1": "Main St 1", "city": "Szeged", "country": "HU"}},
        headers={"Idempotency-Key": key},
    )
