// The wall board: keeps the tiles live over the board's websocket, sizes
// them so every card fits the screen (or pages when they cannot), and says
// so when the data goes stale. No framework, no build step.
(function () {
  "use strict";
  var root = document.getElementById("board");
  if (!root) {
    return;
  }
  var M = {};
  try {
    M = JSON.parse(root.getAttribute("data-messages") || "{}");
  } catch (e) {
    M = {};
  }
  function t(key) {
    return M[key] || key;
  }
  // fmt fills %s/%d/%v in order, like the server's messages.
  function fmt(msg, args) {
    var i = 0;
    return msg.replace(/%%|%[sdv]/g, function (m) {
      return m === "%%" ? "%" : String(args[i++]);
    });
  }

  var hostsEl = root.querySelector("[data-hosts]");
  var alertsEl = root.querySelector("[data-testid=alerts]");
  var waitingEl = root.querySelector("[data-testid=waiting]");
  var connEl = root.querySelector("[data-conn]");
  var pageEl = root.querySelector("[data-page]");
  var tplTile = document.getElementById("tpl-tile");
  var tplHost = document.getElementById("tpl-host");
  var cards = {}; // uuid → the card as last received
  var STALE_AFTER = 5000; // the server sends at least every 2 s

  // ---- Tiles ----------------------------------------------------------

  function num(v) {
    return v === null || v === undefined ? "—" : String(Math.round(v));
  }
  function gib(mib) {
    var g = mib / 1024;
    return g >= 99.95 ? g.toFixed(0) : g.toFixed(1);
  }
  function memText(c) {
    var used = c.mem_used_mib, total = c.mem_total_mib;
    if (total == null || total <= 0) {
      return used == null ? "—" : gib(used) + " GiB";
    }
    return (used == null ? "—" : gib(used)) + " / " + gib(total) + " GiB";
  }
  function memPct(c) {
    if (c.mem_total_mib == null || c.mem_total_mib <= 0 || c.mem_used_mib == null) {
      return 0;
    }
    return Math.min(100, (c.mem_used_mib / c.mem_total_mib) * 100);
  }
  function span(ms) {
    var mins = Math.max(0, Math.floor(ms / 60000));
    var d = Math.floor(mins / 1440), h = Math.floor((mins % 1440) / 60), m = mins % 60;
    if (d > 0) {
      return d + t("board.days_short") + h + t("board.hours_short");
    }
    if (h > 0) {
      return h + t("board.hours_short") + m + t("board.minutes_short");
    }
    return m + t("board.minutes_short");
  }
  function shortType(s) {
    return (s || "").replace(/^NVIDIA GeForce /, "").replace(/^NVIDIA /, "");
  }
  function setText(el, sel, text) {
    var f = el.querySelector('[data-f="' + sel + '"]');
    if (f && f.textContent !== text) {
      f.textContent = text;
    }
  }

  function renderBooking(el, c) {
    var foot = el.querySelector('[data-f="booking"]');
    var b = c.booking;
    var key = b ? b.id + "|" + b.team + "|" + b.task + "|" + b.end : "";
    if (foot.getAttribute("data-key") === key) {
      return;
    }
    foot.setAttribute("data-key", key);
    foot.textContent = "";
    if (!b) {
      return;
    }
    var who = document.createElement("span");
    who.className = "who";
    who.textContent = b.team + " · " + b.task;
    var left = document.createElement("span");
    left.className = "left";
    left.setAttribute("data-end", String(b.end));
    left.textContent = fmt(t("board.left"), [span(b.end - Date.now())]);
    foot.appendChild(who);
    foot.appendChild(left);
  }

  // renderInstances draws a MIG card's instances as chips inside its tile.
  // Only a change of the instances themselves (their profiles) can change
  // the layout; their VRAM and activity change the chips in place, so a
  // busy MIG card does not re-fit the whole wall at every delta.
  function renderInstances(el, c) {
    var box = el.querySelector('[data-f="mig"]');
    var list = c.instances || [];
    var shape = list.map(function (x) { return x.id + ":" + x.profile; }).join(",");
    var reshaped = box.getAttribute("data-shape") !== shape;
    if (reshaped) {
      box.setAttribute("data-shape", shape);
      box.textContent = "";
      box.hidden = list.length === 0;
      for (var i = 0; i < list.length; i++) {
        var made = document.createElement("span");
        made.textContent = list[i].profile;
        box.appendChild(made);
      }
    }
    for (var j = 0; j < list.length; j++) {
      var x = list[j];
      var chip = box.children[j];
      var cls = "inst" + (x.processes > 0 || (x.sm_active != null && x.sm_active >= 10) ? " inst-on" : "");
      if (chip.className !== cls) {
        chip.className = cls;
      }
      var mem = x.mem_used_mib == null || !x.mem_total_mib ? "—" : gib(x.mem_used_mib) + " / " + gib(x.mem_total_mib) + " GiB";
      chip.title = fmt(t("board.instance"), [x.id, x.profile, mem, x.processes]);
    }
    if (reshaped) {
      layoutChanged();
    }
  }

  function renderTile(el, c) {
    var cls = "tile s-" + c.state + (c.registered === false ? " unregistered" : "");
    if (el.className !== cls) {
      el.className = cls;
    }
    el.setAttribute("data-state", c.state);
    setText(el, "index", "#" + c.index);
    setText(el, "type", c.registered === false ? t("board.unregistered_tile") : shortType(c.card_type));
    setText(el, "state", t("board.state." + c.state));
    // The big figure is the metric the server chose (telemetry.Figure): the
    // VRAM share of a card full by its memory, engine activity on a MIG card.
    var big = c.figure === "vram" ? memPct(c) : c.figure === "sm" ? c.sm_active : c.util;
    setText(el, "util", num(big));
    setText(el, "unit", c.figure === "vram" ? t("board.vram_unit") : c.figure === "sm" ? t("board.sm_unit") : "%");
    setText(el, "sm", c.util != null && c.sm_active != null ? fmt(t("board.sm"), [num(c.sm_active)]) + " " : "");
    var fault = el.querySelector('[data-f="fault"]');
    if (fault.textContent !== (c.fault || "")) {
      fault.textContent = c.fault || "";
      fault.hidden = !c.fault;
      layoutChanged();
    }
    renderInstances(el, c);
    setText(el, "temp", num(c.temp_c));
    setText(el, "power", num(c.power_w));
    setText(el, "mem", memText(c));
    var bar = el.querySelector('[data-f="membar"]');
    var w = memPct(c).toFixed(1) + "%";
    if (bar.style.width !== w) {
      bar.style.width = w;
    }
    renderBooking(el, c);
  }

  function tileOf(uuid) {
    return hostsEl.querySelector('.tile[data-uuid="' + CSS.escape(uuid) + '"]');
  }

  // hostName writes a host's name breakable only after its separators
  // (gpu-a100-<wbr>07), never inside a word; a part too long is cut with an
  // ellipsis, the whole name in the title.
  function hostName(el, name) {
    el.textContent = "";
    el.title = name;
    var parts = name.split(/(?<=[-._])/);
    for (var i = 0; i < parts.length; i++) {
      if (i > 0) {
        el.appendChild(document.createElement("wbr"));
      }
      el.appendChild(document.createTextNode(parts[i]));
    }
  }

  function hostOf(name) {
    var h = hostsEl.querySelector('.host[data-host="' + CSS.escape(name) + '"]');
    if (h) {
      return h;
    }
    h = tplHost.content.firstElementChild.cloneNode(true);
    h.setAttribute("data-host", name);
    hostName(h.querySelector(".host-name"), name);
    var after = null;
    var hosts = hostsEl.querySelectorAll(".host");
    for (var i = 0; i < hosts.length; i++) {
      if (hosts[i].getAttribute("data-host") > name) {
        after = hosts[i];
        break;
      }
    }
    hostsEl.insertBefore(h, after);
    var empty = hostsEl.querySelector("[data-testid=board-empty]");
    if (empty) {
      empty.remove();
    }
    return h;
  }

  function placeTile(c) {
    var el = tileOf(c.uuid);
    var host = hostOf(c.host || "?");
    if (!el || el.closest(".host") !== host) {
      if (el) {
        dropTile(el);
      }
      el = tplTile.content.firstElementChild.cloneNode(true);
      el.setAttribute("data-uuid", c.uuid);
      el.setAttribute("title", c.uuid);
      var tiles = host.querySelector(".tiles");
      var after = null;
      for (var i = 0; i < tiles.children.length; i++) {
        var other = cards[tiles.children[i].getAttribute("data-uuid")];
        if (other && other.index > c.index) {
          after = tiles.children[i];
          break;
        }
      }
      tiles.insertBefore(el, after);
      layoutChanged();
    }
    renderTile(el, c);
  }

  function dropTile(el) {
    var host = el.closest(".host");
    el.remove();
    if (host && !host.querySelector(".tile")) {
      host.remove();
    }
    layoutChanged();
  }

  // ---- Frames ---------------------------------------------------------

  function applyFleet(f) {
    var figs = root.querySelectorAll("[data-fig]");
    for (var i = 0; i < figs.length; i++) {
      var k = figs[i].getAttribute("data-fig");
      if (!(k in f)) {
        continue;
      }
      var v = f[k];
      var text = k === "held_idle_hours_today" ? Number(v).toFixed(1) : k === "util_now" ? String(Math.round(v)) : String(v);
      if (figs[i].textContent !== text) {
        figs[i].textContent = text;
      }
    }
    if (f.states) {
      var counts = root.querySelectorAll("[data-count]");
      for (var j = 0; j < counts.length; j++) {
        var n = f.states[counts[j].getAttribute("data-count")];
        counts[j].textContent = String(n || 0);
      }
    }
    if (f.waiting) {
      applyWaiting(f.waiting);
    }
  }

  // applyWaiting lists, per card type, the requests queued for cards.
  function applyWaiting(list) {
    var ul = waitingEl.querySelector("[data-waiting]");
    ul.textContent = "";
    for (var i = 0; i < list.length; i++) {
      var w = list[i];
      var li = document.createElement("li");
      li.textContent = fmt(t("board.waiting_item"), [shortType(w.card_type), w.requests, span(Date.now() - w.oldest_since)]);
      ul.appendChild(li);
    }
    if (waitingEl.hidden !== (list.length === 0)) {
      waitingEl.hidden = list.length === 0;
      layoutChanged();
    }
  }

  // processes names an alert's processes: pid, name, user, VRAM.
  function processes(list) {
    if (!list || list.length === 0) {
      return t("board.no_processes");
    }
    var out = [];
    for (var i = 0; i < list.length; i++) {
      if (i === 3) {
        out.push("+" + (list.length - 3));
        break;
      }
      var p = list[i];
      var mem = p.mem_mib == null ? "—" : gib(p.mem_mib);
      // The agent names each process's OS user; a cron push cannot.
      out.push(p.user ? fmt(t("board.process"), [p.pid, p.name, p.user, mem]) : fmt(t("board.process_anon"), [p.pid, p.name, mem]));
    }
    return out.join(", ");
  }

  // Times in the portal's zone (CARDHOUR_TZ), not the browser's: a wall
  // board's machine is often set to UTC.
  var zoneFmt = null;
  try {
    zoneFmt = new Intl.DateTimeFormat("en-GB", { timeZone: root.getAttribute("data-tz") || undefined, hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" });
  } catch (e) {
    zoneFmt = new Intl.DateTimeFormat("en-GB", { hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" });
  }
  function clockParts(ms) {
    var out = {};
    zoneFmt.formatToParts(new Date(ms)).forEach(function (p) {
      out[p.type] = p.value;
    });
    return out;
  }
  function clock(ms) {
    var p = clockParts(ms);
    return p.hour + ":" + p.minute;
  }

  function applyAlerts(list) {
    var ul = alertsEl.querySelector("[data-alerts]");
    ul.textContent = "";
    for (var i = 0; i < list.length && i < 12; i++) {
      var a = list[i];
      var where = a.host + " #" + a.index;
      // An alert on a card no booking holds has no team to name.
      var who = a.team ? a.team + (a.task ? " / " + a.task : "") : "—";
      var text;
      if (a.kind === "vram") {
        text = fmt(t("board.alert.vram"), [where, Math.round(a.value), who]);
      } else if (a.kind === "held_idle") {
        text = fmt(t("board.alert.held_idle"), [where, who, clock(a.since)]);
      } else if (a.kind === "fault") {
        text = fmt(t("board.alert.fault"), [where, a.reason, clock(a.since)]);
      } else if (a.kind === "unbooked") {
        text = fmt(t("board.alert.unbooked"), [where, processes(a.processes), clock(a.since)]);
      } else if (a.kind === "foreign") {
        text = fmt(t("board.alert.foreign"), [where, who, processes(a.processes), clock(a.since)]);
      } else if (a.kind === "spoof") {
        text = fmt(t("board.alert.spoof"), [where, a.reason]);
      } else {
        text = fmt(t("board.alert.release_warned"), [who, Math.round(a.value)]);
      }
      var li = document.createElement("li");
      li.className = "alert-item a-" + a.kind;
      li.textContent = text;
      ul.appendChild(li);
    }
    alertsEl.hidden = list.length === 0;
    layoutChanged();
  }

  function apply(m) {
    if (m.type === "snapshot") {
      var keep = {};
      cards = {};
      for (var i = 0; i < m.cards.length; i++) {
        cards[m.cards[i].uuid] = m.cards[i];
        keep[m.cards[i].uuid] = true;
      }
      var tiles = hostsEl.querySelectorAll(".tile");
      for (var j = 0; j < tiles.length; j++) {
        if (!keep[tiles[j].getAttribute("data-uuid")]) {
          dropTile(tiles[j]);
        }
      }
      for (var k = 0; k < m.cards.length; k++) {
        placeTile(m.cards[k]);
      }
    } else if (m.cards) {
      for (var n = 0; n < m.cards.length; n++) {
        var d = m.cards[n];
        if (d.removed) {
          delete cards[d.uuid];
          var el = tileOf(d.uuid);
          if (el) {
            dropTile(el);
          }
          continue;
        }
        var c = cards[d.uuid] || {};
        for (var key in d) {
          c[key] = d[key];
        }
        cards[d.uuid] = c;
        placeTile(c);
      }
    }
    if (m.fleet) {
      applyFleet(m.fleet);
    }
    if (m.alerts) {
      applyAlerts(m.alerts);
    }
  }

  // ---- Connection -----------------------------------------------------

  var lastMessage = 0;
  var backoff = 1000;
  var socket = null;

  function setConn(state) {
    if (connEl.getAttribute("data-conn") === state) {
      return;
    }
    connEl.setAttribute("data-conn", state);
    connEl.textContent = t("board.conn." + state);
    root.classList.toggle("is-stale", state !== "live");
  }

  function connect() {
    var url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + root.getAttribute("data-ws");
    setConn(lastMessage ? "reconnecting" : "connecting");
    try {
      socket = new WebSocket(url);
    } catch (e) {
      retry();
      return;
    }
    socket.onmessage = function (ev) {
      var m;
      try {
        m = JSON.parse(ev.data);
      } catch (e) {
        return;
      }
      lastMessage = Date.now();
      backoff = 1000;
      apply(m);
      setConn("live");
    };
    socket.onclose = function (ev) {
      socket = null;
      if (ev && ev.code === 4401) {
        // The server closed it because its credential went (a revoked
        // token, a logout, a disabled user): retrying would only be
        // refused. Say so; a person signs in or an admin issues a token.
        setConn("revoked");
        return;
      }
      setConn("reconnecting");
      retry();
    };
  }

  // retry reconnects with exponential backoff and jitter, so a wall of
  // boards does not return all at once after a restart.
  function retry() {
    var wait = backoff * (0.8 + Math.random() * 0.4);
    backoff = Math.min(backoff * 2, 30000);
    setTimeout(connect, wait);
  }

  setInterval(function () {
    if (socket && lastMessage && Date.now() - lastMessage > STALE_AFTER) {
      setConn("stale");
    }
    var ck = root.querySelector("[data-clock]");
    if (ck) {
      var p = clockParts(Date.now());
      ck.textContent = p.hour + ":" + p.minute + ":" + p.second;
    }
  }, 1000);

  setInterval(function () {
    var lefts = hostsEl.querySelectorAll("[data-end]");
    for (var i = 0; i < lefts.length; i++) {
      lefts[i].textContent = fmt(t("board.left"), [span(Number(lefts[i].getAttribute("data-end")) - Date.now())]);
    }
  }, 30000);

  // ---- Fitting the screen ---------------------------------------------

  // px: below this a tile is no longer readable from across a room — its
  // smallest text (one --u, a tenth of the height) stays at 16 px or more;
  // a fleet that needs smaller tiles is shown in pages instead.
  var MIN_H = 170;
  var pages = null;
  var page = 0;
  var fitQueued = false;

  function overflows() {
    return hostsEl.scrollHeight > hostsEl.clientHeight + 1 || hostsEl.scrollWidth > hostsEl.clientWidth + 1;
  }
  function setSize(h, ratio) {
    root.style.setProperty("--th", h.toFixed(1) + "px");
    root.style.setProperty("--tw", (h * ratio).toFixed(1) + "px");
  }
  // largest finds the tallest tile of the given shape that fits.
  function largest(ratio) {
    var lo = MIN_H, hi = Math.max(MIN_H, hostsEl.clientHeight);
    setSize(lo, ratio);
    if (overflows()) {
      return 0;
    }
    for (var i = 0; i < 14 && hi - lo > 1; i++) {
      var mid = (lo + hi) / 2;
      setSize(mid, ratio);
      if (overflows()) {
        hi = mid;
      } else {
        lo = mid;
      }
    }
    return lo;
  }

  function showHosts(from, to) {
    var hosts = hostsEl.querySelectorAll(".host");
    for (var i = 0; i < hosts.length; i++) {
      hosts[i].hidden = i < from || i >= to;
    }
  }

  // fit picks the tile shape and size that fill the screen with every card;
  // when even the smallest readable tiles do not fit, it splits the hosts
  // into pages that the board turns through.
  function fit() {
    fitQueued = false;
    var hosts = hostsEl.querySelectorAll(".host");
    showHosts(0, hosts.length);
    pages = null;
    for (var k = 0; k < hosts.length; k++) {
      hosts[k].removeAttribute("data-page");
    }
    var best = 0, bestRatio = 2, bestU = 0, bestArea = 0;
    var ratios = [1.45, 1.6, 1.75, 2, 2.3, 2.7];
    var tried = [];
    for (var i = 0; i < ratios.length; i++) {
      var h = largest(ratios[i]);
      tried.push(ratios[i] + ":" + h.toFixed(0));
      // The type scales with the tile's smaller side (see --u in board.css):
      // the winner is the shape with the largest type, not the largest area.
      // Shapes with (nearly) the same type: the one with more room wins,
      // so long team and task names are cut less.
      var u = Math.min((h * ratios[i]) / 17, h / 10.6);
      var area = h * h * ratios[i];
      if (h > 0 && (u > bestU * 1.02 || (u > bestU * 0.98 && area > bestArea))) {
        best = h;
        bestRatio = ratios[i];
        bestU = Math.max(u, bestU);
        bestArea = area;
      }
    }
    // For whoever wonders why the tiles have the size they have.
    root.setAttribute("data-fit", tried.join(" "));
    if (best > 0) {
      setSize(best, bestRatio);
      pageEl.hidden = true;
      return;
    }
    // Paging at the smallest size, hosts kept whole.
    setSize(MIN_H, 2);
    pages = [];
    var start = 0;
    while (start < hosts.length) {
      var end = start + 1;
      showHosts(start, end + 1);
      while (end < hosts.length && !overflows()) {
        end++;
        showHosts(start, end + 1);
      }
      for (var k = start; k < end; k++) {
        hosts[k].setAttribute("data-page", pages.length);
      }
      pages.push([start, end]);
      start = end;
    }
    page = page % pages.length;
    turn();
  }

  function turn() {
    if (!pages) {
      return;
    }
    var p = pages[page];
    showHosts(p[0], p[1]);
    pageEl.hidden = false;
    pageEl.textContent = fmt(t("board.page"), [page + 1 + " / " + pages.length]);
  }

  setInterval(function () {
    if (pages && pages.length > 1) {
      page = (page + 1) % pages.length;
      turn();
    }
  }, 15000);

  function layoutChanged() {
    if (!fitQueued) {
      fitQueued = true;
      requestAnimationFrame(fit);
    }
  }

  window.addEventListener("resize", layoutChanged);
  fit();
  connect();
})();
