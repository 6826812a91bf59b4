-- Report (report page): the winning chance through the games of getvariable('r_games'), two
-- players: after every judged choice (fct_race_choices), the chance of the player in the
-- first seat and of the other (one minus it), with the choice, what was best and its loss.
with games as (
    select game_id, game_no from int_games_in_scope
    where list_contains(getvariable('r_games')::varchar[], game_id)
),

seats as (
    select game_id, player, seat from stg_game_players
),

final as (
    select
        games.game_id,
        choices.seq,
        choices.kind,
        choices.player,
        seats.seat,
        case when seats.seat = 1 then choices.chance_made else 1.0 - choices.chance_made end as first_seat_chance,
        choices.chance_best,
        choices.chance_made,
        choices.loss_pp,
        case when choices.kind = 'keep' then dice_text(choices.kept_key) else choices.choice end as made,
        case when choices.kind = 'keep' then dice_text(choices.best_key)
             when choices.best_key = 1 then 'roll' else 'bank' end as best
    from fct_race_choices as choices
    inner join games on choices.game_no = games.game_no
    inner join seats on games.game_id = seats.game_id and choices.player = seats.player
    where choices.race_judged
)

select * from final
order by game_id, seq, kind = 'action'
