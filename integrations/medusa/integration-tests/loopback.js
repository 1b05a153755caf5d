// Medusa's test runner starts its server with app.listen(port), on every
// interface; these tests keep to loopback, so a listen given only a port
// is given 127.0.0.1 as its host.
const net = require("node:net")

const listen = net.Server.prototype.listen
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" && (args.length === 1 || typeof args[1] === "function")) {
    args.splice(1, 0, "127.0.0.1")
  }
  return listen.apply(this, args)
}
