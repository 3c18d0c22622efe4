/*
 * Search for the site opened from the file system. A browser refuses `new Worker(url)` to a page read from a file,
 * so Material's search worker cannot start there. This stands in for `Worker` on such pages only: the worker's
 * script runs in a hidden frame of the page, whose window is the worker's global scope, and messages cross in both
 * directions as the Worker interface carries them. Material's worker awaits `importScripts`, which here loads each
 * script into the frame. Served over HTTP(S), the page keeps the browser's own Worker.
 */
(function () {
  "use strict";
  if (window.location.protocol !== "file:") {
    return;
  }

  function FileWorker(url) {
    var worker = this;
    var listeners = [];
    var pending = [];
    var started = false;
    var frame = document.createElement("iframe");
    frame.hidden = true;
    frame.setAttribute("aria-hidden", "true");
    (document.body || document.documentElement).appendChild(frame);
    var scope = frame.contentWindow;
    var source = new URL(url, window.location.href).href;

    function load(href) {
      return new Promise(function (resolve, reject) {
        var script = scope.document.createElement("script");
        script.src = new URL(href, source).href;
        script.onload = resolve;
        script.onerror = function () {
          reject(new Error("cannot load " + script.src));
        };
        scope.document.head.appendChild(script);
      });
    }

    function toWorker(data) {
      scope.dispatchEvent(new scope.MessageEvent("message", { data: data }));
    }

    this.onmessage = null;
    this.onerror = null;
    this._listeners = listeners;
    this._frame = frame;
    this._send = function (data) {
      if (started) {
        toWorker(data);
      } else {
        pending.push(data);
      }
    };

    /* The worker's side: what it posts reaches this page's listeners, as a worker's message would. */
    scope.postMessage = function (data) {
      window.setTimeout(function () {
        var event = new MessageEvent("message", { data: data });
        if (typeof worker.onmessage === "function") {
          worker.onmessage(event);
        }
        listeners.slice().forEach(function (listener) {
          listener.call(worker, event);
        });
      }, 0);
    };
    scope.importScripts = function () {
      return Promise.all(Array.prototype.map.call(arguments, load));
    };

    load(source).then(
      function () {
        started = true;
        pending.splice(0).forEach(toWorker);
      },
      function (error) {
        if (typeof worker.onerror === "function") {
          worker.onerror(error);
        }
      }
    );
  }

  FileWorker.prototype.postMessage = function (data) {
    this._send(data);
  };
  FileWorker.prototype.addEventListener = function (type, listener) {
    if (type === "message") {
      this._listeners.push(listener);
    }
  };
  FileWorker.prototype.removeEventListener = function (type, listener) {
    var at = this._listeners.indexOf(listener);
    if (type === "message" && at >= 0) {
      this._listeners.splice(at, 1);
    }
  };
  FileWorker.prototype.terminate = function () {
    this._frame.remove();
  };

  window.Worker = FileWorker;
})();
