// A TTR Arena bot in C++: answers every decision with a uniformly random legal action.
//
// The referee starts it with TTR_BOT_ADDRESS set (HOST:PORT, or unix:/PATH in the sandbox),
// waits for the gRPC health check to answer SERVING, then calls StartGame, Act for each
// decision of the bot's seat, and EndGame. gRPC serves calls on several threads and one
// process may play several games at once: shared state is behind a mutex.
#include <csignal>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>

#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include "ttr/v1/bot_service.grpc.pb.h"

namespace {

// What the bot keeps of one game; put your own per-game state here.
struct Game {
  uint32_t seat = 0;
  uint32_t num_seats = 0;
  int decisions = 0;
  std::mt19937_64 rng;  // seeded from bot_seed, so `ttr play --seed N` replays the same game
};

// The name of the member of the action's `kind` oneof that is set (e.g. "claim_route"),
// read from the descriptor, so a member added to the contract later is named too.
std::string Kind(const ttr::v1::Action& action) {
  const auto* oneof = action.GetDescriptor()->FindOneofByName("kind");
  const auto* field = action.GetReflection()->GetOneofFieldDescriptor(action, oneof);
  return field != nullptr ? field->name() : "unknown action";
}

class Bot final : public ttr::v1::BotService::Service {
 public:
  grpc::Status StartGame(grpc::ServerContext*, const ttr::v1::StartGameRequest* req,
                         ttr::v1::StartGameResponse*) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      Game& game = games_[req->game_id()];
      game.seat = req->seat();
      game.num_seats = req->num_seats();
      game.rng.seed(req->bot_seed());
    }
    // A board game sends its map, the card game its own setup; this bot needs neither.
    std::ostringstream line;
    line << "game " << req->game_id() << ": start, "
         << (req->has_card_game() ? "card game " : "board game ") << req->variant() << ", seat "
         << req->seat() << " of " << req->num_seats() << ", " << req->clock().move_limit_ms()
         << " ms a move + " << req->clock().bank_ms() << " ms bank\n";
    std::cerr << line.str() << std::flush;
    return grpc::Status::OK;
  }

  grpc::Status Act(grpc::ServerContext*, const ttr::v1::ActRequest* req,
                   ttr::v1::ActResponse* resp) override {
    const int n = req->legal_actions_size();
    if (n == 0) return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "no legal actions");
    int choice;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = games_.find(req->game_id());
      std::uniform_int_distribution<int> pick(0, n - 1);
      if (it != games_.end()) {
        it->second.decisions++;
        choice = pick(it->second.rng);
      } else {
        choice = pick(rng_);  // a game this process never started (it restarted mid-game)
      }
    }
    std::ostringstream line;
    if (req->has_rejection()) {
      line << "game " << req->game_id() << ": previous answer rejected: "
           << req->rejection().rule() << ": " << req->rejection().message() << "\n";
    }
    line << "game " << req->game_id() << ": " << req->events_size() << " new event(s), " << n
         << " legal action(s), chose #" << choice << ": " << Kind(req->legal_actions(choice))
         << "\n";
    std::cerr << line.str() << std::flush;
    resp->set_request_id(req->request_id());
    resp->set_legal_action_index(static_cast<uint32_t>(choice));
    return grpc::Status::OK;
  }

  grpc::Status EndGame(grpc::ServerContext*, const ttr::v1::EndGameRequest* req,
                       ttr::v1::EndGameResponse*) override {
    int decisions = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = games_.find(req->game_id());
      if (it != games_.end()) {
        decisions = it->second.decisions;
        games_.erase(it);
      }
    }
    std::ostringstream line;
    line << "game " << req->game_id() << ": end after " << decisions << " decision(s);";
    for (const auto& s : req->outcome().seats()) {
      line << " seat " << s.seat() << ": " << s.total() << " (rank " << s.rank() << ")";
    }
    line << "\n";
    std::cerr << line.str() << std::flush;
    return grpc::Status::OK;
  }

 private:
  std::mutex mu_;
  std::map<std::string, Game> games_;
  std::mt19937 rng_{std::random_device{}()};
};

}  // namespace

int main() {
  const char* env = std::getenv("TTR_BOT_ADDRESS");
  const std::string address = env != nullptr && *env != '\0' ? env : "127.0.0.1:50051";

  // SIGTERM and SIGINT are taken by a thread of ours (sigwait), not by a handler: blocked
  // here, before gRPC starts its threads, so that every thread inherits the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  grpc::EnableDefaultHealthCheckService(true);  // grpc.health.v1.Health: "" is SERVING
  Bot bot;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&bot);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) {
    std::cerr << "cannot listen on " << address << "\n";
    return 1;
  }
  if (address.rfind("unix:", 0) == 0) {
    std::cout << "listening on " << address << std::endl;
  } else {
    std::cout << "listening on " << address.substr(0, address.rfind(':')) << ":" << port
              << std::endl;
  }

  std::thread stopper([&server, &stop_signals] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    // Finish the calls in flight for up to a second, then cancel the rest.
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  });
  server->Wait();
  stopper.join();
  return 0;
}
