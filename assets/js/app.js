// cardhour's small shared script: no framework, no build step.
(function () {
  "use strict";
  // Destructive forms ask first; the question comes from the server in the
  // viewer's language (data-confirm).
  document.addEventListener("submit", function (ev) {
    var form = ev.target;
    var question = form && form.getAttribute && form.getAttribute("data-confirm");
    if (question && !window.confirm(question)) {
      ev.preventDefault();
    }
  });

  // The section menu (a <details>): open on a wide screen, for browsers
  // whose stylesheet cannot show a closed one's content; closed when the
  // screen narrows to a phone's; Escape closes it and gives the button
  // back the focus.
  var menu = document.querySelector("[data-menu]");
  if (menu && window.matchMedia) {
    var wide = window.matchMedia("(min-width: 701px)");
    var fit = function () {
      menu.open = wide.matches;
      menu.classList.toggle("is-wide", wide.matches);
    };
    fit();
    if (wide.addEventListener) {
      wide.addEventListener("change", fit);
    }
    menu.addEventListener("keydown", function (ev) {
      if (ev.key === "Escape" && menu.open && !wide.matches) {
        menu.open = false;
        menu.querySelector("summary").focus();
      }
    });
  }
})();
