"""Scrapes of a server's /metrics: the text, and its families and samples parsed."""

import re

import requests

from helpers import wait_for

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


class Scrape:
    """One /metrics text, parsed: families' HELP and TYPE, and samples."""

    def __init__(self, text):
        self.text = text
        self.lines = text.splitlines()
        self.help, self.type, self.samples = {}, {}, {}
        for line in self.lines:
            if line.startswith("# HELP "):
                name, _, help_text = line[7:].partition(" ")
                self.help[name] = help_text
            elif line.startswith("# TYPE "):
                name, _, kind = line[7:].partition(" ")
                self.type[name] = kind
            elif line and not line.startswith("#"):
                match = SAMPLE.match(line)
                assert match, f"not a sample line: {line!r}"
                name, labels, value = match.groups()
                key = (name, frozenset(LABEL.findall(labels or "")))
                assert key not in self.samples, f"duplicate sample: {line!r}"
                self.samples[key] = float(value)

    def value(self, name, **labels):
        key = (name, frozenset((k, str(v)) for k, v in labels.items()))
        assert key in self.samples, f"no sample {name}{labels} in\n{self.text}"
        return self.samples[key]

    def has(self, name, **labels):
        """Whether the scrape has the sample `name` with exactly `labels`."""
        return (name, frozenset((k, str(v)) for k, v in labels.items())) in self.samples

    def names(self):
        return {name for name, _ in self.samples}


def metrics_port(server):
    return wait_for(lambda: server.metrics_port, timeout=30, what="the metrics port")


def scrape(server):
    resp = requests.get(f"http://127.0.0.1:{metrics_port(server)}/metrics", timeout=30)
    assert resp.status_code == 200, resp.text
    assert resp.headers["Content-Type"].startswith("text/plain"), resp.headers
    return Scrape(resp.text)
