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
})();
