"""TPC-H orders as client orders: generate ORDERS and LINEITEM and stream them joined.

Data from ``tpchgen-cli`` (:data:`TPCHGEN_VERSION`) as CSV; both tables ascend by order
key, so :func:`load_orders` reads them in step, one order's lines at a time. Mapping:
OrderID ``TPCH-<o_orderkey>``, customer ``CUST-<o_custkey>``, USD, O_ORDERDATE at midnight
UTC; SKU ``P<l_partkey>-S<l_suppkey>``, unit price L_EXTENDEDPRICE / L_QUANTITY.
"""

from __future__ import annotations

import csv
import json
import math
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from client.rejects import InvalidOrder, Problem, problems_from
from orders.models import ClientOrder

TPCHGEN_VERSION = "4.0.0"

ORDERS_FILE = "orders.csv"
LINEITEM_FILE = "lineitem.csv"
PARTSUPP_FILE = "partsupp.csv"
PART_FILE = "part.csv"
_TABLES = "orders,lineitem,partsupp,part"
_FILES = (ORDERS_FILE, LINEITEM_FILE, PARTSUPP_FILE, PART_FILE)

STOCK_SCALE = 0.25
"""Fraction of ``ps_availqty`` loaded: at scale 0.01 a 1,000-order demo is ~95% served."""
MARKER_FILE = "tpch.json"
"""Written after a successful generation: scale factor and generator, checked on reuse."""

_ORDER_COLUMNS = ("o_orderkey", "o_custkey", "o_totalprice", "o_orderdate")
_LINE_COLUMNS = ("l_orderkey", "l_partkey", "l_suppkey", "l_quantity", "l_extendedprice",
                 "l_discount", "l_tax")
_PRICE_PLACES = Decimal("0.0001")


class TpchFormatError(ValueError):
    """The TPC-H files cannot be joined: missing column, bad key, or keys out of order."""


def generate(scale_factor: float, out_dir: Path, *, executable: str | None = None) -> Path:
    """Generate ``orders.csv``, ``lineitem.csv``, ``partsupp.csv``, ``part.csv`` in ``out_dir``.

    Unless all are present.

    Written to a temporary folder and moved, so an interrupted run leaves nothing to reuse;
    use one folder per scale factor (0.01: 15,000 orders, about 9 MB). Raises ValueError for
    a bad scale factor or a folder of another, FileNotFoundError without ``tpchgen-cli``,
    RuntimeError (with its stderr) if it fails.
    """
    if isinstance(scale_factor, bool) or not isinstance(scale_factor, int | float) or not (
        math.isfinite(scale_factor) and scale_factor > 0
    ):
        raise ValueError(f"scale_factor: must be a positive number, got {scale_factor!r}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if all((out_dir / name).is_file() for name in _FILES):
        _check_marker(out_dir, scale_factor)
        return out_dir
    command = [executable or _find_tpchgen(), "csv", "--scale-factor", str(scale_factor),
               "--tables", _TABLES, "--quiet"]
    with tempfile.TemporaryDirectory(dir=out_dir, prefix=".tpchgen-") as tmp:
        done = subprocess.run([*command, "--output-dir", tmp], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(
                f"tpchgen-cli exited with {done.returncode}: {done.stderr.strip()[-2000:]}"
            )
        for name in _FILES:
            Path(tmp, name).replace(out_dir / name)
    marker = {"scaleFactor": scale_factor, "generator": f"tpchgen-cli {_version(command[0])}"}
    (out_dir / MARKER_FILE).write_text(json.dumps(marker) + "\n", encoding="utf-8")
    return out_dir


def load_orders(
    directory: Path,
    limit: int | None = None,
    *,
    on_invalid: Callable[[InvalidOrder], None] | None = None,
) -> Iterator[ClientOrder]:
    """Stream TPC-H orders joined with their lines, ascending; ``limit`` counts ORDERS rows.

    Orders breaking the contract go to ``on_invalid``, not yielded. Raises ValueError for a
    negative ``limit``, FileNotFoundError, TpchFormatError for a missing column, a non-integer
    key, or keys out of order (detected when reached).
    """
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ValueError(f"limit: must be a non-negative integer or None, got {limit!r}")
    directory = Path(directory)
    with (open(directory / ORDERS_FILE, newline="", encoding="utf-8") as orders_file,
          open(directory / LINEITEM_FILE, newline="", encoding="utf-8") as lines_file):
        orders = _Table(orders_file, ORDERS_FILE, _ORDER_COLUMNS)
        lines = _Table(lines_file, LINEITEM_FILE, _LINE_COLUMNS)
        pending = lines.next()
        previous_key = 0
        read = 0
        while limit is None or read < limit:
            order_row = orders.next()
            if order_row is None:
                if pending is not None:
                    raise TpchFormatError(
                        f"{LINEITEM_FILE} line {lines.line_num}: l_orderkey "
                        f"{lines.key(pending, 'l_orderkey')} has no order in {ORDERS_FILE}"
                    )
                break
            read += 1
            key = orders.key(order_row, "o_orderkey")
            if key <= previous_key:
                raise TpchFormatError(
                    f"{ORDERS_FILE} line {orders.line_num}: o_orderkey {key} does not ascend "
                    f"(previous {previous_key}); the join needs files sorted by order key"
                )
            previous_key = key
            line_rows: list[dict[str, str]] = []
            while pending is not None and lines.key(pending, "l_orderkey") == key:
                line_rows.append(pending)
                pending = lines.next()
            if pending is not None and lines.key(pending, "l_orderkey") < key:
                raise TpchFormatError(
                    f"{LINEITEM_FILE} line {lines.line_num}: l_orderkey "
                    f"{lines.key(pending, 'l_orderkey')} is not the order being read ({key}): "
                    "LINEITEM is not sorted by order key or has a row without an order"
                )
            order = _to_order(order_row, line_rows)
            if isinstance(order, InvalidOrder):
                if on_invalid is not None:
                    on_invalid(order)
                continue
            yield order


def load_stock(directory: Path, skus: Iterable[str] | None = None,
               scale: float = STOCK_SCALE) -> dict[str, int]:
    """Read PARTSUPP as SKU -> ``floor(ps_availqty * scale)``, only ``skus`` if given.

    Raises ValueError if ``scale`` is not in 0..1, FileNotFoundError, TpchFormatError.
    """
    if isinstance(scale, bool) or not isinstance(scale, int | float) or not 0 <= scale <= 1:
        raise ValueError(f"scale: must be a number from 0 to 1, got {scale!r}")
    wanted = None if skus is None else set(skus)
    stock: dict[str, int] = {}
    with open(Path(directory) / PARTSUPP_FILE, newline="", encoding="utf-8") as handle:
        table = _Table(handle, PARTSUPP_FILE, ("ps_partkey", "ps_suppkey", "ps_availqty"))
        while (row := table.next()) is not None:
            sku = f"P{table.key(row, 'ps_partkey')}-S{table.key(row, 'ps_suppkey')}"
            if wanted is None or sku in wanted:
                stock[sku] = math.floor(table.key(row, "ps_availqty") * scale)
    return stock


def load_prices(directory: Path, skus: Iterable[str]) -> dict[str, Decimal]:
    """Read PART as SKU -> ``p_retailprice`` of its part, for ``skus`` (``P<part>-S<supp>``).

    The catalogue's price (:mod:`orders.pricing`): TPC-H's ``l_extendedprice`` is
    ``l_quantity * p_retailprice``. SKUs of another form or of no PART row are left out.
    Raises FileNotFoundError, TpchFormatError.
    """
    parts: dict[int, list[str]] = {}
    for sku in skus:
        part, sep, supplier = sku.removeprefix("P").partition("-S")
        if sku.startswith("P") and sep and part.isdigit() and supplier.isdigit():
            parts.setdefault(int(part), []).append(sku)
    prices: dict[str, Decimal] = {}
    with open(Path(directory) / PART_FILE, newline="", encoding="utf-8") as handle:
        table = _Table(handle, PART_FILE, ("p_partkey", "p_retailprice"))
        while (row := table.next()) is not None:
            for sku in parts.get(table.key(row, "p_partkey"), ()):
                price = _decimal(row["p_retailprice"])
                if not isinstance(price, Decimal):
                    raise TpchFormatError(f"{PART_FILE} line {table.line_num}: p_retailprice "
                                          f"must be a number, got {price!r}")
                prices[sku] = price
    return prices


class _Table:
    """A CSV file with a header row, read one row at a time as a dict of named cells."""

    def __init__(self, handle: Any, name: str, required: tuple[str, ...]) -> None:
        self._reader = csv.reader(handle)
        self._name = name
        header = next(self._reader, None)
        if header is None:
            raise TpchFormatError(f"{name}: empty file, expected a header row")
        self._columns = [column.strip().lower() for column in header]
        missing = [column for column in required if column not in self._columns]
        if missing:
            raise TpchFormatError(f"{name}: missing column(s) {missing} in the header row")

    @property
    def line_num(self) -> int:
        return self._reader.line_num

    def next(self) -> dict[str, str] | None:
        row = next(self._reader, None)
        if row is None:
            return None
        if len(row) != len(self._columns):
            raise TpchFormatError(
                f"{self._name} line {self.line_num}: {len(row)} cells, header has "
                f"{len(self._columns)}"
            )
        return dict(zip(self._columns, row, strict=True))

    def key(self, row: dict[str, str], column: str) -> int:
        try:
            return int(row[column])
        except ValueError:
            raise TpchFormatError(
                f"{self._name} line {self.line_num}: {column} must be an integer, "
                f"got {row[column]!r}"
            ) from None


def _to_order(order_row: dict[str, str],
              line_rows: list[dict[str, str]]) -> ClientOrder | InvalidOrder:
    key = order_row["o_orderkey"]
    order_id = f"TPCH-{key}"
    where = f"TPC-H o_orderkey={key}"
    problems: list[Problem] = []
    lines = [_to_line(index, row, problems) for index, row in enumerate(line_rows)]
    try:
        created = datetime.combine(date.fromisoformat(order_row["o_orderdate"]),
                                   datetime.min.time(), tzinfo=UTC)
    except ValueError:
        problems.append(Problem("o_orderdate", f"must be a date YYYY-MM-DD, got "
                                               f"{order_row['o_orderdate']!r}"))
    if problems:
        return InvalidOrder(where, order_id, tuple(problems))
    try:
        # Raw fields, validated by the contract so that its errors name what is wrong.
        return ClientOrder.model_validate(dict(
            order_id=order_id,
            customer_id=f"CUST-{order_row['o_custkey']}",
            currency="USD",
            lines=lines,
            total_price=_decimal(order_row["o_totalprice"]),
            created_at=created,
        ))
    except ValidationError as exc:
        return InvalidOrder(where, order_id, problems_from(exc))


def _to_line(index: int, row: dict[str, str], problems: list[Problem]) -> dict[str, Any]:
    quantity: Any = row["l_quantity"]
    unit_price: Any = None
    parsed_quantity = _decimal(quantity)
    extended = _decimal(row["l_extendedprice"])
    if isinstance(parsed_quantity, Decimal) and parsed_quantity == parsed_quantity.to_integral():
        quantity = int(parsed_quantity)
    if isinstance(quantity, int) and quantity > 0 and isinstance(extended, Decimal):
        unit_price = extended / quantity
        if unit_price != unit_price.quantize(_PRICE_PLACES):
            problems.append(Problem(
                f"lines[{index}].unitPrice",
                f"l_extendedprice / l_quantity = {extended} / {quantity} is not exact to 4 "
                "decimal places; the Order contract derives the extended price as "
                "quantity * unitPrice, so this line cannot be carried exactly",
            ))
    return {
        "sku": f"P{row['l_partkey']}-S{row['l_suppkey']}",
        "quantity": quantity,
        "unit_price": unit_price if unit_price is not None else row["l_extendedprice"],
        "discount": _decimal(row["l_discount"]),
        "tax": _decimal(row["l_tax"]),
    }


def _decimal(text: str) -> Decimal | str:
    """Parse a number exactly; return the text unchanged so the contract names the field."""
    try:
        return Decimal(text.strip())
    except InvalidOperation:
        return text


def _find_tpchgen() -> str:
    beside = Path(sys.executable).parent / "tpchgen-cli"
    found = str(beside) if beside.is_file() else shutil.which("tpchgen-cli")
    if found is None:
        raise FileNotFoundError(
            "tpchgen-cli: not found next to the Python interpreter nor on PATH; install it "
            f"with 'pip install tpchgen-cli=={TPCHGEN_VERSION}'"
        )
    return found


def _version(executable: str) -> str:
    done = subprocess.run([executable, "--version"], capture_output=True, text=True)
    return done.stdout.strip().removeprefix("tpchgen-cli ") or "unknown"


def _check_marker(out_dir: Path, scale_factor: float) -> None:
    marker = out_dir / MARKER_FILE
    if not marker.is_file():
        return  # files placed by hand: trusted as they are
    recorded = json.loads(marker.read_text(encoding="utf-8")).get("scaleFactor")
    if recorded != scale_factor:
        raise ValueError(
            f"out_dir: {out_dir} holds TPC-H data of scale factor {recorded}, not "
            f"{scale_factor}; use one folder per scale factor"
        )
