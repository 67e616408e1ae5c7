// A TTR Arena bot in Go: answers every decision with a uniformly random legal action.
//
// The referee starts it with TTR_BOT_ADDRESS set (HOST:PORT, or unix:/PATH in the sandbox),
// waits for the gRPC health check to answer SERVING, then calls StartGame, Act for each
// decision of the bot's seat, and EndGame. One process may play several games at once.
package main

import (
	"context"
	"fmt"
	"math/rand"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	ttrv1 "ttrarena/ttr/v1"
)

// game is what the bot keeps of one game; put your own per-game state here.
type game struct {
	seat      uint32
	numSeats  uint32
	variant   string
	decisions int
	rng       *rand.Rand // seeded from bot_seed, so `ttr play --seed N` replays the same game
}

type bot struct {
	ttrv1.UnimplementedBotServiceServer
	mu    sync.Mutex
	games map[string]*game
	rng   *rand.Rand
}

func logf(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}

func (b *bot) StartGame(ctx context.Context, req *ttrv1.StartGameRequest) (*ttrv1.StartGameResponse, error) {
	g := &game{seat: req.GetSeat(), numSeats: req.GetNumSeats(), variant: req.GetVariant(),
		rng: rand.New(rand.NewSource(int64(req.GetBotSeed())))}
	b.mu.Lock()
	b.games[req.GetGameId()] = g
	b.mu.Unlock()
	// A board game sends its map, the card game its own setup; this bot needs neither.
	what := "board game"
	if req.GetCardGame() != nil {
		what = "card game"
	}
	logf("game %s: start, %s %s, seat %d of %d, %d ms a move + %d ms bank",
		req.GetGameId(), what, req.GetVariant(), req.GetSeat(), req.GetNumSeats(),
		req.GetClock().GetMoveLimitMs(), req.GetClock().GetBankMs())
	return &ttrv1.StartGameResponse{}, nil
}

func (b *bot) Act(ctx context.Context, req *ttrv1.ActRequest) (*ttrv1.ActResponse, error) {
	legal := req.GetLegalActions()
	if len(legal) == 0 {
		return nil, status.Error(codes.InvalidArgument, "no legal actions")
	}
	b.mu.Lock()
	g := b.games[req.GetGameId()]
	if g != nil {
		g.decisions++
	}
	rng := b.rng // a game this process never started (it restarted mid-game)
	if g != nil {
		rng = g.rng
	}
	i := rng.Intn(len(legal)) // rand.Rand is not safe for concurrent use: under the lock
	b.mu.Unlock()
	if r := req.GetRejection(); r != nil {
		logf("game %s: previous answer rejected: %s: %s", req.GetGameId(), r.GetRule(), r.GetMessage())
	}
	logf("game %s: %d new event(s), %d legal action(s), chose #%d: %s",
		req.GetGameId(), len(req.GetEvents()), len(legal), i, kind(legal[i]))
	return &ttrv1.ActResponse{
		RequestId: req.GetRequestId(),
		Answer:    &ttrv1.ActResponse_LegalActionIndex{LegalActionIndex: uint32(i)},
	}, nil
}

func (b *bot) EndGame(ctx context.Context, req *ttrv1.EndGameRequest) (*ttrv1.EndGameResponse, error) {
	b.mu.Lock()
	g := b.games[req.GetGameId()]
	delete(b.games, req.GetGameId())
	b.mu.Unlock()
	scores := []string{}
	for _, s := range req.GetOutcome().GetSeats() {
		scores = append(scores, fmt.Sprintf("seat %d: %d (rank %d)", s.GetSeat(), s.GetTotal(), s.GetRank()))
	}
	decisions := 0
	if g != nil {
		decisions = g.decisions
	}
	logf("game %s: end after %d decision(s); %s", req.GetGameId(), decisions, strings.Join(scores, ", "))
	return &ttrv1.EndGameResponse{}, nil
}

// kind names the member of the action's oneof that is set (e.g. "claim_route"); a member
// newer than this code still gets its name, from the descriptor the request carried.
func kind(a *ttrv1.Action) string {
	m := a.ProtoReflect()
	if f := m.WhichOneof(m.Descriptor().Oneofs().ByName("kind")); f != nil {
		return string(f.Name())
	}
	return "unknown action"
}

func listen(address string) (net.Listener, error) {
	if strings.HasPrefix(address, "unix:") {
		path := strings.TrimPrefix(address, "unix:")
		os.Remove(path)
		return net.Listen("unix", path)
	}
	return net.Listen("tcp", address)
}

func main() {
	address := os.Getenv("TTR_BOT_ADDRESS")
	if address == "" {
		address = "127.0.0.1:50051"
	}
	lis, err := listen(address)
	if err != nil {
		logf("cannot listen on %s: %v", address, err)
		os.Exit(1)
	}
	server := grpc.NewServer()
	ttrv1.RegisterBotServiceServer(server, &bot{
		games: map[string]*game{},
		rng:   rand.New(rand.NewSource(time.Now().UnixNano())),
	})
	healthpb.RegisterHealthServer(server, health.NewServer()) // "" answers SERVING
	if strings.HasPrefix(address, "unix:") {
		fmt.Printf("listening on %s\n", address)
	} else {
		fmt.Printf("listening on %s\n", lis.Addr().String())
	}
	os.Stdout.Sync()

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-stop
		// Finish the calls in flight for up to a second, then drop the rest.
		timer := time.AfterFunc(time.Second, server.Stop)
		server.GracefulStop()
		timer.Stop()
	}()
	if err := server.Serve(lis); err != nil {
		logf("serve: %v", err)
		os.Exit(1)
	}
}
