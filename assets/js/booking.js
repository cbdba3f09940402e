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
  }
})();
