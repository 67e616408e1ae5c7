#!/usr/bin/env node
// TTR Arena sample bot in Node.js: answers every decision with a uniformly random legal action.
//
// The contract is read at run time from the repository's proto/ files (../../proto relative
// to this file), so the bot needs no generated code. Run it with
//   TTR_BOT_ADDRESS=127.0.0.1:50051 node bot.js      (port 0 picks a free port)
// or with a Unix socket, which is what the referee's sandbox gives it:
//   TTR_BOT_ADDRESS=unix:/run/ttr/bot.sock node bot.js
// It prints `listening on ADDRESS`, serves ttr.v1.BotService and grpc.health.v1.Health,
// and exits cleanly on SIGTERM or SIGINT.
'use strict';

const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const PROTO_ROOT = path.resolve(__dirname, '..', '..', 'proto');
const LOADER_OPTIONS = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

// The standard health service (grpc/health/v1/health.proto), only what Check needs, as
// protobufjs JSON so the bot folder needs no extra .proto file.
const HEALTH_JSON = {
  nested: {
    grpc: {
      nested: {
        health: {
          nested: {
            v1: {
              nested: {
                HealthCheckRequest: { fields: { service: { type: 'string', id: 1 } } },
                HealthCheckResponse: {
                  fields: { status: { type: 'ServingStatus', id: 1 } },
                  nested: {
                    ServingStatus: {
                      values: { UNKNOWN: 0, SERVING: 1, NOT_SERVING: 2, SERVICE_UNKNOWN: 3 },
                    },
                  },
                },
                Health: {
                  methods: {
                    Check: { requestType: 'HealthCheckRequest', responseType: 'HealthCheckResponse' },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
};

function loadServices() {
  const botDef = protoLoader.loadSync(path.join(PROTO_ROOT, 'ttr', 'v1', 'bot_service.proto'), {
    ...LOADER_OPTIONS,
    includeDirs: [PROTO_ROOT],
  });
  const healthDef = protoLoader.fromJSON(HEALTH_JSON, LOADER_OPTIONS);
  const bot = grpc.loadPackageDefinition(botDef).ttr.v1.BotService.service;
  const health = grpc.loadPackageDefinition(healthDef).grpc.health.v1.Health.service;
  return { bot, health };
}

// Games this process is playing: game_id -> { seat, numSeats }. Kept only to show where a
// real bot would hold its per-game state; several games may run at once.
const games = new Map();

const botImpl = {
  StartGame(call, callback) {
    const req = call.request;
    games.set(req.game_id, { seat: req.seat, numSeats: req.num_seats });
    callback(null, {});
  },
  Act(call, callback) {
    const req = call.request;
    const n = req.legal_actions.length;
    if (n === 0) {
      callback({ code: grpc.status.INVALID_ARGUMENT, details: 'no legal actions' });
      return;
    }
    callback(null, {
      request_id: req.request_id,
      legal_action_index: Math.floor(Math.random() * n),
    });
  },
  EndGame(call, callback) {
    games.delete(call.request.game_id);
    callback(null, {});
  },
};

const healthImpl = {
  Check(call, callback) {
    const service = call.request.service;
    if (service === '' || service === 'ttr.v1.BotService') {
      callback(null, { status: 'SERVING' });
    } else {
      callback({ code: grpc.status.NOT_FOUND, details: `unknown service ${service}` });
    }
  },
};

function splitAddress(address) {
  if (address.startsWith('unix:/')) return { host: 'unix', port: null };
  const i = address.lastIndexOf(':');
  if (i <= 0) {
    throw new Error(`TTR_BOT_ADDRESS must be HOST:PORT or unix:/PATH, got ${JSON.stringify(address)}`);
  }
  return { host: address.slice(0, i), port: address.slice(i + 1) };
}

function main() {
  const address = process.env.TTR_BOT_ADDRESS || '127.0.0.1:50051';
  const { host } = splitAddress(address);
  const services = loadServices();
  const server = new grpc.Server();
  server.addService(services.bot, botImpl);
  server.addService(services.health, healthImpl);
  server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err, port) => {
    if (err) {
      process.stderr.write(`cannot listen on ${address}: ${err.message}\n`);
      process.exit(1);
    }
    // Writes to files and pipes are synchronous in Node on POSIX: the line is out at once.
    process.stdout.write(host === 'unix' ? `listening on ${address}\n` : `listening on ${host}:${port}\n`);
  });

  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    // Finish calls in flight for up to a second, then drop the rest.
    const timer = setTimeout(() => {
      server.forceShutdown();
      process.exit(0);
    }, 1000);
    timer.unref();
    server.tryShutdown(() => {
      clearTimeout(timer);
      process.exit(0);
    });
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main();
