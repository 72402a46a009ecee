// The operator dashboard's script: fetches the JSON endpoints and draws the page.
// Every value goes onto the page as text (textContent / createTextNode), never as markup,
// so an order whose fields hold HTML or script shows them literally. No library, no build.
"use strict";

(function () {
  const root = location.pathname.replace(/\/+$/, "");
  const SVG = "http://www.w3.org/2000/svg";
  let generation = 0;
  let timer = null;

  // -- small DOM helpers ------------------------------------------------------------
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(props || {})) {
      if (name.startsWith("data-")) node.setAttribute(name, value);
      else node[name] = value;
    }
    for (const child of children) {
      node.append(child instanceof Node ? child : document.createTextNode(show(child)));
    }
    return node;
  }
  function show(value) {
    if (value === null || value === undefined) return "\u2014";
    if (typeof value === "object") return JSON.stringify(value);
    return String(value);
  }
  function rows(selector, items, makeRow) {
    const body = document.querySelector(selector + " tbody");
    body.replaceChildren(...items.map(makeRow));
    if (!items.length) {
      const columns = document.querySelectorAll(selector + " thead th").length || 2;
      body.append(el("tr", {className: "empty"}, el("td", {colSpan: columns}, "none")));
    }
  }
  function tr(...cells) {
    return el("tr", {}, ...cells.map((c) => (c instanceof Node && c.tagName === "TD")
      ? c : el("td", {}, c)));
  }
  function orderLink(record) {
    const query = record.clientId
      ? "client=" + encodeURIComponent(record.clientId) + "&orderId="
        + encodeURIComponent(record.clientOrderId)
      : "orderId=" + encodeURIComponent(record.orderId);
    return el("a", {href: "#order?" + query, className: "order-link"},
      record.clientOrderId || record.orderId);
  }
  function alertLink(order) {
    // An alert names its order by key; the link asks the lookup by client and OrderID.
    if (!order) return null;
    const link = orderLink({clientId: order.client, clientOrderId: order.orderId,
      orderId: order.key});
    link.textContent = order.key;
    return link;
  }
  function say(text, kind) {
    const box = document.getElementById("message");
    box.textContent = text || "";
    box.className = kind || "";
  }
  function folded(value) {
    const text = show(value);
    if (text.length <= 120) return text;
    return el("details", {}, el("summary", {}, text.slice(0, 100) + "\u2026"),
      el("pre", {}, text));
  }
  function seconds(s) {
    if (s === null || s === undefined) return null;
    if (s < 120) return s.toFixed(1) + " s";
    if (s < 7200) return (s / 60).toFixed(1) + " min";
    return (s / 3600).toFixed(1) + " h";
  }

  // -- talking to the app -----------------------------------------------------------
  async function call(path, options) {
    const headers = Object.assign({}, (options || {}).headers);
    const response = await fetch(root + "/api/" + path, Object.assign({}, options, {headers}));
    let body = null;
    try { body = await response.json(); } catch (e) { body = null; }
    if (!response.ok) {
      const reason = body && body.error ? body.error : "HTTP " + response.status;
      const error = new Error(reason);
      error.status = response.status;
      error.body = body;
      throw error;
    }
    return body;
  }

  async function resubmit(record) {
    const operator = document.getElementById("operator").value.trim();
    if (!operator) {
      say("Type your name in Operator first: actions are logged with it.", "error");
      return;
    }
    localStorage.setItem("ops-operator", operator);
    try {
      const result = await call("resubmit", {
        method: "POST",
        headers: {"content-type": "application/json", "x-ops-operator": operator},
        body: JSON.stringify({client: record.clientId || null,
          orderId: record.clientId ? record.clientOrderId : record.orderId,
          reason: "resubmitted from the dashboard"}),
      });
      say(result.message, "ok");
    } catch (error) {
      say("Resubmit refused: " + ((error.body && error.body.message) || error.message),
        "error");
    }
    await route();
  }
  function resubmitButton(record) {
    if (record.processState !== "Error") return "";
    const button = el("button", {type: "button", className: "resubmit"}, "Resubmit");
    button.setAttribute("data-order", record.orderId);
    button.addEventListener("click", () => { button.disabled = true; resubmit(record); });
    return button;
  }

  // -- charts (inline SVG) ----------------------------------------------------------
  function chart(id, values, minutes, kind) {
    const svg = document.getElementById(id);
    const width = 480, height = 160, left = 36, bottom = 20, top = 8;
    const most = Math.max(1, ...values);
    const step = (width - left - 4) / Math.max(1, values.length);
    const y = (v) => top + (height - top - bottom) * (1 - v / most);
    const shapes = [];
    const add = (tag, attrs, text) => {
      const node = document.createElementNS(SVG, tag);
      for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
      if (text !== undefined) node.textContent = text;
      shapes.push(node);
      return node;
    };
    add("line", {x1: left, y1: y(0), x2: width, y2: y(0), class: "axis"});
    add("text", {x: left - 4, y: y(most) + 4, class: "label end"}, String(most));
    add("text", {x: left - 4, y: y(0), class: "label end"}, "0");
    if (minutes.length) {
      add("text", {x: left, y: height - 4, class: "label"}, minutes[0].slice(11, 16));
      add("text", {x: width, y: height - 4, class: "label end"},
        minutes[minutes.length - 1].slice(11, 16) + " UTC");
    }
    if (kind === "bars") {
      values.forEach((v, i) => {
        if (v === null) return;  // before the read's coverage: not drawn
        const bar = add("rect", {x: left + i * step + 1, y: y(v), width: Math.max(1, step - 2),
          height: y(0) - y(v), class: "bar"});
        const title = document.createElementNS(SVG, "title");
        title.textContent = minutes[i].slice(11, 16) + ": " + v;
        bar.append(title);
      });
    } else {
      const points = values.map((v, i) => (v === null ? null
        : (left + (i + 0.5) * step) + "," + y(v))).filter((p) => p !== null);
      add("polyline", {points: points.join(" "), class: "line"});
    }
    svg.replaceChildren(...shapes);
    svg.setAttribute("data-values", values.join(","));
    svg.setAttribute("aria-label", id + ": " + values.join(", "));
  }

  // -- overview ---------------------------------------------------------------------
  function renderOverview(data) {
    const summary = data.summary;
    rows("#state-counts", Object.entries(summary.counts), ([state, n]) => {
      const row = tr(state, n);
      row.setAttribute("data-state", state);
      return row;
    });
    const finalAt = summary.finalCountsAt && summary.finalCountsAt !== summary.at
      ? " (final states as of " + summary.finalCountsAt.slice(11, 19) + " UTC)" : "";
    rows("#backlog", [["total", summary.total + finalAt],
      ["in flight", summary.inFlight + " / " + summary.maxInFlight + " (MAX_IN_FLIGHT)"],
      ["stuck (CompleteBy passed)", summary.stuck + (summary.stuckTruncated ? "+" : "")]],
    ([name, value]) => { const row = tr(name, value); row.setAttribute("data-figure", name);
      return row; });
    chart("chart-terminal", data.charts.terminal, data.charts.minutes, "bars");
    chart("chart-inflight", data.charts.inFlight, data.charts.minutes, "line");
    document.getElementById("chart-note").textContent = data.charts.truncated
      ? "More orders changed in the last hour than the " + data.charts.changesRead
        + " newest read: the charts start at " + data.charts.coveredFrom.slice(11, 16)
        + " UTC." : "";
    const attention = [];
    for (const [list, found] of Object.entries(data.attention)) {
      for (const record of found.orders) attention.push([list, record]);
    }
    rows("#attention", attention, ([list, r]) => {
      const overdue = r.overdueS === null ? null : seconds(r.overdueS)
        + (r.beyondWindow ? " (beyond the supervisor's window)" : "");
      const row = tr(list, el("td", {}, orderLink(r)), r.clientId, r.processState, r.attempt,
        r.failureCount, r.completeBy, overdue, r.failureReason, el("td", {}, resubmitButton(r)));
      row.setAttribute("data-list", list);
      row.setAttribute("data-order", r.orderId);
      return row;
    });
    const more = Object.entries(data.attention).filter(([, f]) => f.more).map(([l]) => l);
    document.getElementById("attention-note").textContent = more.length
      ? "More orders than shown in: " + more.join(", ") : "";
    const ended = [];
    for (const [list, found] of Object.entries(data.compensations)) {
      for (const record of found.orders) ended.push([list, record]);
    }
    ended.sort((a, b) => (a[1].updatedAt < b[1].updatedAt ? 1 : -1));
    rows("#compensations", ended, ([list, r]) => {
      const row = tr(list, el("td", {}, orderLink(r)), r.clientId, r.processState, r.updatedAt,
        r.compensationFailures, r.failureReason);
      row.setAttribute("data-list", list);
      row.setAttribute("data-order", r.orderId);
      return row;
    });
    const moreEnded = Object.entries(data.compensations).filter(([, f]) => f.more)
      .map(([l]) => l);
    document.getElementById("compensations-note").textContent = moreEnded.length
      ? "More orders than shown in: " + moreEnded.join(", ") : "";
    const messaging = data.messaging;
    rows("#queues", messaging.queues || [], (q) => {
      const row = tr(q.name, q.active, q.deadLetter);
      row.setAttribute("data-queue", q.name);
      return row;
    });
    document.getElementById("updated").textContent = "app time " + summary.at;
    rows("#dead-letters", messaging.deadLettered, (m) => tr(m.queue, m.sequenceNumber,
      m.messageId, m.enqueuedAt, m.deadLetterReason, m.deadLetterDescription));
    document.getElementById("queue-note").textContent = (messaging.notes || []).join("; ")
      + (summary.deadLetterNote ? " " + summary.deadLetterNote : "");
    const budget = summary.retryBudget;
    rows("#services", Object.keys(budget.maxCallsPerService), (service) => tr(service,
      summary.circuits[service] || "closed (no call yet)", budget.maxCallsPerService[service],
      budget.budget));
    rows("#alerts", messaging.alerts, (m) => {
      const a = m.body && typeof m.body === "object" ? m.body : {reason: m.body};
      const collapsed = m.collapsedQueue
        ? m.collapsedQueue + ": " + (m.deadLettered === null ? "?" : m.deadLettered) : "";
      const kind = m.count > 1 ? a.kind + " \u00d7" + m.count : a.kind;
      const row = tr(a.at, kind, m.order ? el("td", {}, alertLink(m.order)) : a.orderId,
        a.instanceId, collapsed, a.reason);
      row.setAttribute("data-kind", a.kind);
      if (m.order) row.setAttribute("data-order", m.order.key);
      return row;
    });
  }

  // -- one order --------------------------------------------------------------------
  function keyValues(selector, object) {
    rows(selector, Object.entries(object || {}), ([name, value]) => {
      const row = tr(name, value);
      row.setAttribute("data-field", name);
      return row;
    });
  }
  function renderDetail(data) {
    const record = data.record || {};
    document.getElementById("detail-title").textContent = "Order "
      + (record.clientOrderId || record.orderId || (data.order || {}).orderId)
      + (record.clientId ? " of client " + record.clientId : "");
    document.getElementById("detail-actions").replaceChildren(
      data.record ? resubmitButton(record) : "");
    keyValues("#record", data.record);
    keyValues("#order", data.order);
    keyValues("#trace", data.trace);
    rows("#compensation", data.compensation || [], (e) => {
      const details = e.details || {};  // with details=true, step and outcome are in there
      const row = tr(e.seq, e.step || details.step, e.outcome || details.outcome, e.recordedAt,
        e.instanceId, e.details ? folded(e.details) : "withheld (details=true shows them)");
      row.setAttribute("data-step", e.step || details.step);
      return row;
    });
    // Without details=true a line's SKU and units are withheld ("<Confidential>"): no link.
    rows("#reservation", data.reservation || [], (r) => tr(r.line,
      String(r.sku).startsWith("<") ? r.sku
        : el("a", {href: "#stock?sku=" + encodeURIComponent(r.sku)
          + (/[?&]details=true\b/.test(location.hash) ? "&details=true" : "")}, r.sku),
      r.requested,
      r.held, r.released, r.available === null ? "not stocked" : r.available));
    const attempts = document.getElementById("attempts");
    attempts.replaceChildren(...data.attempts.map((attempt) => {
      const status = attempt.status || {};
      const table = el("table", {className: "timeline"},
        el("thead", {}, tr("event", "time", "name", "input", "result")),
        el("tbody", {}, ...attempt.timeline.map((e) => tr(e.type, e.time, e.name,
          el("td", {}, folded(e.input)), el("td", {}, folded(e.result))))));
      const box = el("div", {className: "attempt"},
        el("h4", {}, attempt.instanceId + ": " + show(status.runtimeStatus)
          + (attempt.error ? " (history unavailable: " + attempt.error + ")" : "")), table);
      box.setAttribute("data-instance", attempt.instanceId);
      return box;
    }));
    const sent = data.sentByAttempts.map((m) => [m.instanceId, m.status, m.at, m.reason])
      .concat(data.queued.map((m) => ["queue " + m.queue, (m.body || {}).status,
        (m.body || {}).at, (m.body || {}).reason]));
    rows("#sent", sent, (cells) => tr(...cells));
    document.getElementById("detail-note").textContent = (data.notes || []).join("; ");
  }

  // -- one SKU ----------------------------------------------------------------------
  function renderStock(data) {
    document.getElementById("stock-title").textContent = "Stock of " + data.sku;
    keyValues("#stock-figures", {available: data.available, loaded: data.loaded,
      restocked: data.restocked, held: data.held, balanced: data.balanced,
      holds: data.holdCount});
    rows("#stock-holds", data.holds, (h) => tr(
      el("a", {href: "#order?orderId=" + encodeURIComponent(h.orderId)}, h.orderId),
      h.line, h.quantity, h.released));
  }

  // -- routing ----------------------------------------------------------------------
  async function route() {
    const mine = ++generation;
    const hash = location.hash.replace(/^#/, "");
    const detail = hash.startsWith("order?");
    const stock = hash.startsWith("stock?");
    document.body.dataset.view = detail ? "detail" : stock ? "stock" : "overview";
    document.body.dataset.state = "loading";
    document.getElementById("overview").hidden = detail || stock;
    document.getElementById("detail").hidden = !detail;
    document.getElementById("stock").hidden = !stock;
    try {
      if (detail) {
        document.getElementById("detail-title").textContent = "";
        renderDetail(await call("order?" + hash.slice("order?".length)));
      } else if (stock) {
        renderStock(await call("stock?" + hash.slice("stock?".length)));
      } else {
        renderOverview(await call("overview"));
      }
      if (mine !== generation) return;
      document.body.dataset.state = "ready";
    } catch (error) {
      if (mine !== generation) return;
      if (detail) document.getElementById("detail").hidden = true;  // no stale order shown
      say(error.message, "error");
      document.body.dataset.state = "error";
    }
    document.body.dataset.generation = String(generation);
  }
  function schedule() {
    clearInterval(timer);
    if (document.getElementById("auto-refresh").checked) {
      timer = setInterval(() => { if (document.body.dataset.view === "overview") route(); },
        5000);
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    document.getElementById("operator").value = localStorage.getItem("ops-operator") || "";
    document.getElementById("auto-refresh").addEventListener("change", schedule);
    document.getElementById("order-form").addEventListener("submit", (event) => {
      event.preventDefault();
      const client = document.getElementById("order-client").value.trim();
      const orderId = document.getElementById("order-id").value.trim();
      if (!orderId) {
        say("Type the client's OrderID (and the client) to find an order.", "error");
        return;
      }
      location.hash = "order?" + (client ? "client=" + encodeURIComponent(client) + "&" : "")
        + "orderId=" + encodeURIComponent(orderId);
    });
    document.getElementById("stock-form").addEventListener("submit", (event) => {
      event.preventDefault();
      const sku = document.getElementById("stock-sku").value.trim();
      if (sku) location.hash = "stock?sku=" + encodeURIComponent(sku);
    });
    window.addEventListener("hashchange", () => { say(""); route(); });
    schedule();
    route();
  });
})();
