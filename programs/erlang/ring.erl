%% SPDX-License-Identifier: MIT
%% The erlang-ring workload: a ring of Processes lightweight processes
%% passes one token around Laps times (Processes * Laps messages). Run by
%% krunner's erlang-ring suite after erlc compiled it into a scratch dir:
%%   erl -noshell -pa DIR -run ring main 1000 100
%% Prints key=value metric lines; total_ms is the ring's own clock, from
%% spawning the first process to the token's last arrival.
-module(ring).
-export([main/1]).

main([ProcessesArg, LapsArg]) ->
    Processes = list_to_integer(ProcessesArg),
    Laps = list_to_integer(LapsArg),
    Messages = Processes * Laps,
    Start = erlang:monotonic_time(nanosecond),
    First = build(Processes, self()),
    First ! {token, Messages},
    receive
        done -> ok
    after 600000 ->
        io:format(standard_error, "ring: the token did not come back~n", []),
        erlang:halt(1)
    end,
    Ns = erlang:monotonic_time(nanosecond) - Start,
    io:format("total_ms=~.3f~n", [Ns / 1.0e6]),
    io:format("messages_per_sec=~.1f~n", [Messages / (Ns / 1.0e9)]),
    erlang:halt(0).

%% Spawns the ring: each process forwards to the next; the last one
%% forwards to the first, which it learns through a setup message.
build(Processes, Main) ->
    Last = spawn(fun() -> wait_first(Main) end),
    First = lists:foldl(fun(_, Next) -> spawn(fun() -> loop(Next, Main) end) end,
                        Last, lists:seq(2, Processes)),
    Last ! {first, First},
    First.

wait_first(Main) ->
    receive {first, First} -> loop(First, Main) end.

%% Counts the messages down; the process that receives the last one tells
%% Main. Every process stops when the count reaches it.
loop(Next, Main) ->
    receive
        {token, 1} ->
            Main ! done;
        {token, N} ->
            Next ! {token, N - 1},
            loop(Next, Main)
    end.
