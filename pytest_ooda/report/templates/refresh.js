// ooda view: reload the page when the results it shows change, while a session runs.
// The server renders data-version (the results' version when the page was made) and
// data-poll (where to ask for the current one); data-always keeps polling when no
// session runs (the index, where a new session can start at any time).
(function () {
  var body = document.body;
  var version = body.getAttribute("data-version");
  var url = body.getAttribute("data-poll");
  var always = body.getAttribute("data-always") === "yes";
  function poll() {
    fetch(url, { cache: "no-store" })
      .then(function (response) { return response.json(); })
      .then(function (state) {
        if (String(state.version) !== version) {
          location.reload();
        } else if (always || state.running) {
          setTimeout(poll, 2000);
        }
      })
      .catch(function () { setTimeout(poll, 5000); });
  }
  setTimeout(poll, 2000);
})();
