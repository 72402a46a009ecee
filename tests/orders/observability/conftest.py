import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from orders.observability import metrics


class Readings:
    """Metric points of a test's own meter provider, by name and attributes."""

    def __init__(self, reader: InMemoryMetricReader) -> None:
        self.reader = reader

    def points(self) -> dict[str, dict[tuple, float]]:
        data = self.reader.get_metrics_data()
        result: dict[str, dict[tuple, float]] = {}
        for rm in data.resource_metrics if data else []:
            for sm in rm.scope_metrics:
                for metric in sm.metrics:
                    for point in metric.data.data_points:
                        key = tuple(sorted(point.attributes.items()))
                        value = getattr(point, "value", None)
                        if value is None:  # histogram
                            value = (point.count, point.sum)
                        result.setdefault(metric.name, {})[key] = value
        return result


@pytest.fixture
def readings():
    reader = InMemoryMetricReader()
    metrics.install(MeterProvider(metric_readers=[reader]))
    yield Readings(reader)
    metrics.install(None)
