#!/usr/bin/env node
// A TTR Arena bot in Node.js: answers every decision with a uniformly random legal action.
//
// The contract is read at start-up from this folder's proto/ (a copy of the referee's
// proto/ttr/v1/*.proto) with @grpc/proto-loader, so there is no generated code. The referee
// starts the bot with TTR_BOT_ADDRESS set (HOST:PORT, port 0 = any free port; or
// unix:/PATH, which is what its sandbox gives), waits for the gRPC health check to answer
// SERVING, then calls StartGame, Act for each decision of the bot's seat, and EndGame. By
// hand:
//   TTR_BOT_ADDRESS=127.0.0.1:50051 node bot.js
// It prints `listening on ADDRESS` to stdout, what it does to stderr (the game's log), and
// exits cleanly on SIGTERM or SIGINT.
'use strict';

const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const PROTO_ROOT = path.join(__dirname, 'proto');
const LOADER_OPTIONS = {
  keepCase: true, // field names as in the .proto files: game_id, legal_actions, ...
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true, // a oneof's member name in a field of its own: action.kind === 'claim_route'
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

// A small seeded generator (splitmix64): the same bot_seed gives the same choices, so
// `ttr play --seed N` replays the same game. bot_seed arrives as a decimal string (longs:
// String); a referee that predates it sends none, and then the choices are Math.random's.
function seededRandom(seedText) {
  if (seedText === undefined || seedText === null || seedText === '') return Math.random;
  let state = BigInt.asUintN(64, BigInt(seedText));
  return () => {
    state = BigInt.asUintN(64, state + 0x9e3779b97f4a7c15n);
    let z = state;
    z = BigInt.asUintN(64, (z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n);
    z = BigInt.asUintN(64, (z ^ (z >> 27n)) * 0x94d049bb133111ebn);
    z ^= z >> 31n;
    return Number(z >> 11n) / 2 ** 53;
  };
}

function log(line) {
  process.stderr.write(`${line}\n`);
}

// Games this process is playing: game_id -> { seat, numSeats, decisions, random }. Put your own
// per-game state here; several games may run at once.
const games = new Map();

const botImpl = {
  StartGame(call, callback) {
    const req = call.request;
    games.set(req.game_id, {
      seat: req.seat,
      numSeats: req.num_seats,
      decisions: 0,
      random: seededRandom(req.bot_seed),
    });
    // A board game sends its map (game_map), the card game its own setup (card_game).
    const family = req.card_game ? 'card' : 'board';
    const clock = req.clock || {};
    log(
      `game ${req.game_id}: start, ${family} game ${req.variant}, seat ${req.seat} of ` +
        `${req.num_seats}, ${clock.move_limit_ms} ms a move + ${clock.bank_ms} ms bank`,
    );
    callback(null, {});
  },
  Act(call, callback) {
    const req = call.request;
    const n = req.legal_actions.length;
    if (n === 0) {
      callback({ code: grpc.status.INVALID_ARGUMENT, details: 'no legal actions' });
      return;
    }
    const game = games.get(req.game_id);
    if (game) game.decisions += 1;
    if (req.rejection) {
      log(`game ${req.game_id}: previous answer rejected: ${req.rejection.rule}: ${req.rejection.message}`);
    }
    const choice = Math.floor((game ? game.random : Math.random)() * n);
    log(
      `game ${req.game_id}: ${req.events.length} new event(s), ${n} legal action(s), ` +
        `chose #${choice}: ${req.legal_actions[choice].kind || 'unknown action'}`,
    );
    // Answer by index (or with a whole action: { request_id, action: {...} }).
    callback(null, { request_id: req.request_id, legal_action_index: choice });
  },
  EndGame(call, callback) {
    const req = call.request;
    const game = games.get(req.game_id);
    games.delete(req.game_id);
    const seats = (req.outcome && req.outcome.seats) || [];
    const scores = seats.map((s) => `seat ${s.seat}: ${s.total} (rank ${s.rank})`).join(', ');
    log(`game ${req.game_id}: end after ${game ? game.decisions : 0} decision(s); ${scores}`);
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
      log(`cannot listen on ${address}: ${err.message}`);
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
