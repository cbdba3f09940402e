// Booking form niceties; the form works without them.
(function () {
  "use strict";
  // Choosing another task reloads the form with the card types that fit it.
  var chooser = document.querySelector("[data-testid=task-chooser]");
  if (chooser) {
    var sel = chooser.querySelector("select");
    if (sel) {
      sel.addEventListener("change", function () { chooser.submit(); });
    }
  }
  // Typing a duration or a window picks the matching mode.
  var form = document.querySelector("[data-testid=booking-form]");
  if (form) {
    var pick = function (mode) {
      var r = form.querySelector("input[name=mode][value=" + mode + "]");
      if (r) { r.checked = true; }
    };
    ["duration_hours"].forEach(function (n) {
      var el = form.querySelector("[name=" + n + "]");
      if (el) { el.addEventListener("input", function () { pick("now"); }); }
    });
    ["start", "end"].forEach(function (n) {
      var el = form.querySelector("[name=" + n + "]");
      if (el) { el.addEventListener("input", function () { pick("window"); }); }
    });
    // The VRAM warning follows the chosen type and count: each type's
    // warning carries the count that holds the task (the server's sizing).
    var warnings = form.querySelectorAll("[data-testid=vram-warning]");
    var count = form.querySelector("[name=count]");
    var warn = function () {
      var chosen = form.querySelector("input[name=card_type]:checked");
      var n = parseInt(count ? count.value : "", 10);
      warnings.forEach(function (w) {
        var show = chosen && w.getAttribute("data-card-type") === chosen.value &&
          !isNaN(n) && n < parseInt(w.getAttribute("data-min"), 10);
        w.hidden = !show;
      });
    };
    if (warnings.length > 0) {
      if (count) { count.addEventListener("input", warn); }
      form.querySelectorAll("input[name=card_type]").forEach(function (r) {
        r.addEventListener("change", warn);
      });
    }
  }
})();
