-- Fact: per player and overall (is_overall: the row over every seat), the games sat in,
-- complete and finished, the wins on corrected and on claimed scores, and the final totals
-- (rpt_player_summary's definitions). Not additive across players: the overall row counts
-- each game once, however many of its players it seats. A fact all the same, a few rows
-- per player, so that the summary reads aggregates only (pipeline.engines.spark.stats).
with seats as (
    select * from int_game_players_in_scope
),

final as (
    select
        grouping(player) = 1 as is_overall,
        player,
        count(distinct game_id) as games,
        count(distinct game_id) filter (where complete) as complete_games,
        count(distinct game_id) filter (where finished) as finished_games,
        count(*) filter (where finished and won_corrected) as wins,
        count(*) filter (where finished and won_claimed) as wins_claimed,
        sum(claimed_total)::bigint as claimed_points,
        sum(corrected_total)::bigint as corrected_points
    from seats
    group by grouping sets ((), (player))
    having count(*) > 0  -- no overall row over no rows
)

select * from final
