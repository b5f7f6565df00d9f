"""Demo topics 101–105: fruit flies, raised-bed soil, hydrangeas, toilets, drills."""

from __future__ import annotations

from .spec import doc, topic

TOPICS = [
    topic(
        "101",
        "home",
        text="how to get rid of fruit flies in kitchen",
        description="""
            The user wants practical steps to end a fruit fly infestation in their kitchen
            and keep it from coming back.
        """,
        narrative="""
            A perfect document gives a complete plan: find and remove the breeding sites
            (overripe produce, drains, recycling, compost caddies), trap the adults and
            prevent a return. Highly relevant documents cover most of this, for example a
            working trap plus source removal. A page with only a trap recipe or only
            prevention tips is relevant; one that mainly tells fruit flies apart from other
            small flies, or deals with flies outdoors, is marginal. Pages about fruit
            (recipes, fruit trees) or other pests are not relevant, however many words
            they share with the query.
        """,
        docs=[
            doc(
                4,
                "guide",
                "Fruit flies in the kitchen: find the source, trap, prevent",
                """
                Fruit flies do not appear out of nowhere: every one of them hatched from
                something moist and fermenting within a few metres of where you see it.
                Trapping the adults helps, but the infestation only ends when the breeding
                sites are gone. Plan on a week, because eggs laid before you start will
                still hatch.

                1. Hunt the source. Check the fruit bowl, potatoes and onions at the bottom
                of the bag, the recycling bin, the compost caddy and the sink drain.
                2. Bin or refrigerate anything overripe, and rinse bottles and cans before
                they go in the recycling.
                3. Clean the drain: pour a kettle of hot water down it, scrub the overflow
                and the underside of the stopper, then run hot water daily for a week.
                4. Set two or three traps: a small glass of cider vinegar with a drop of
                dish soap, covered with plastic wrap poked with a few holes.
                5. Empty the compost caddy every day and keep its lid closed.

                After a week, count the flies in your traps. If numbers are still rising,
                you have missed a breeding site; a forgotten bag of potatoes is the usual
                culprit.
            """,
            ),
            doc(
                4,
                "forum",
                "Finally beat our fruit fly plague: what actually worked",
                """
                Three weeks ago our kitchen had clouds of fruit flies every evening. I tried
                everything on the internet, so here is what made the difference, in order.

                First, traps alone did nothing until I found where they were breeding. For
                us it was the drain in the island sink (you could see them sitting in it at
                night) and a bag of onions with one soft onion at the bottom. I poured
                boiling water down the drain every morning for a week, scrubbed the stopper,
                and threw the onions out.

                Second, traps: cider vinegar, a drop of dish soap and a paper cone into a
                jam jar caught about forty a day at first, then five, then none. Third,
                prevention: fruit now lives in the fridge in summer, and the recycling gets
                rinsed. It has been ten days without a single fly.

                Reply from tidy_tomas: the soft-onion thing got us too. Also check under
                the fridge for spilled juice.
            """,
                extra={"replies": 14},
            ),
            doc(
                3,
                "guide",
                "The fruit fly trap that works: cider vinegar and dish soap",
                """
                The most reliable homemade fruit fly trap costs nothing. Pour about two
                centimetres of apple cider vinegar into a small jar, add one drop of dish
                soap to break the surface tension, and cover the jar with plastic wrap held
                by a rubber band. Poke four or five holes with a toothpick.

                The flies follow the smell in and cannot find their way out. Put the trap
                right next to where you see them gathering and replace the vinegar every
                three or four days. A trap catches adults only, so throw out overripe fruit
                at the same time or new flies will keep hatching.
            """,
            ),
            doc(
                3,
                "faq",
                "Why do fruit flies keep coming back after I clean?",
                """
                Because the adults you can see are only part of the population. A female
                fruit fly lays hundreds of eggs on fermenting material, and they hatch in
                about a day. The larvae live in the film inside drains, in the gunk at the
                bottom of a recycling bin, or in a single forgotten potato.

                To break the cycle, remove every breeding site at once and keep it clean for
                at least a week, which is longer than one generation. Pour boiling water down
                drains, rinse containers before recycling and store ripe fruit in the
                fridge. Traps speed things up, but they will never win on their own.
            """,
            ),
            doc(
                3,
                "blog",
                "We tested five fruit fly traps side by side",
                """
                For two weeks we set five fruit fly traps on the same kitchen counter and
                counted the catch every morning: cider vinegar with soap, red wine dregs, a
                banana slice in a paper cone, a commercial bait station and yellow sticky
                cards.

                Cider vinegar with a drop of soap won, with wine dregs a close second. The
                banana cone caught well for two days and then became a breeding site of its
                own, so empty it often. The sticky cards caught flies but looked awful. In
                every case the catch only fell for good once we had thrown out the fruit the
                flies were breeding in.
            """,
            ),
            doc(
                2,
                "product",
                "FlyLure countertop fruit fly trap, 2-pack",
                """
                A discreet, refillable trap for kitchens and pantries. Each unit holds a
                food-based liquid lure that attracts fruit flies through a one-way lid.
                Place it near fruit bowls, bins or sinks. Starts catching within hours;
                replace the lure every 30 days.
            """,
                specs=[
                    ("Contents", "2 traps, 2 lure refills"),
                    ("Active ingredient", "food-grade vinegar blend, no insecticide"),
                    ("Coverage", "one trap per room"),
                    ("Price", "$11.99"),
                ],
                extra={"price": "$11.99", "rating": "4.1 / 5"},
            ),
            doc(
                2,
                "blog",
                "Keep produce fresh longer (and the flies away)",
                """
                Most of what ends up in our compost could have been eaten if stored well.
                Bananas, peaches and tomatoes keep best on the counter until ripe, then in
                the fridge. Apples and citrus keep longest in the crisper drawer.

                Storing ripe produce cold has a second benefit: fruit flies cannot breed on
                fruit they cannot reach. Wash fruit when you bring it home, since eggs can
                already be on the skin, and never keep a bowl of very ripe fruit out in
                summer.
            """,
            ),
            doc(
                2,
                "forum",
                "Does pouring bleach down the drain kill fruit fly larvae?",
                """
                We have fruit flies coming out of the kitchen sink drain. Someone told me to
                pour bleach down it. Is that enough?

                Reply from plumber_pat: bleach runs straight past the film where larvae
                live. Boiling water and a stiff drain brush do more, followed by a cup of
                baking soda and vinegar if you like. Repeat daily for a week. Bleach also
                does your pipes no favours.
            """,
                extra={"replies": 6},
            ),
            doc(
                1,
                "guide",
                "Fungus gnats or fruit flies? How to tell them apart",
                """
                Both are tiny flies you find indoors, but they are different pests. Fruit
                flies are tan, with red eyes and a rounded body, and hover around fruit,
                bins and sinks. Fungus gnats are darker and slender, with long legs, and
                stay near houseplants because they breed in damp potting soil.

                If your flies gather around the plant pots, let the top few centimetres of
                soil dry out and use yellow sticky cards. If they prefer the fruit bowl, you
                are dealing with fruit flies.
            """,
            ),
            doc(
                1,
                "guide",
                "Keeping house flies off the patio this summer",
                """
                House flies on the patio come from nearby bins, pet waste and compost. Keep
                outdoor bins closed and away from seating, clean up after pets daily, and
                turn the compost heap so food scraps are buried.

                A ceiling or pedestal fan is the most effective repellent for a dining area:
                flies struggle in moving air. Citronella candles do little on their own.
            """,
            ),
            doc(
                1,
                "forum",
                "Tiny flies in the basement shower drain",
                """
                There are small fuzzy, moth-like flies on the wall of our basement shower,
                which hardly gets used. Are these fruit flies? Bleach did nothing.

                Reply from drainguy: those are drain flies. They breed in the slime layer
                inside rarely used drains. Scrub the drain with a long brush, run water
                every day and they will disappear within two weeks.
            """,
                extra={"replies": 3},
            ),
            doc(
                0,
                "blog",
                "Stone fruit galette for late-summer kitchens",
                """
                When the kitchen counter is covered in peaches and plums, this rustic
                galette is the answer. Toss sliced fruit with sugar, lemon zest and a spoon
                of cornflour, pile it in the middle of a round of shortcrust and fold the
                edges over. Bake at 200 °C for about forty minutes until the fruit bubbles.
            """,
                site="example-kitchen.test",
            ),
            doc(
                0,
                "guide",
                "Thinning fruit on young apple trees",
                area="garden",
                body="""
                Young apple trees often set more fruit than they can ripen. In early summer,
                after the natural June drop, thin each cluster to one or two fruits and
                leave about fifteen centimetres between them. The remaining apples grow
                larger, and the tree is less likely to fall into a cycle of biennial
                bearing.
            """,
            ),
            doc(
                0,
                "news",
                "Why geneticists love the humble fruit fly",
                """
                The fruit fly has been a workhorse of biology labs for more than a century.
                It breeds in under two weeks, is cheap to keep in vials of food, and shares
                a surprising number of disease-related genes with humans. Researchers use
                it to study everything from development to sleep and ageing.
            """,
            ),
            doc(
                0,
                "product",
                "Kitchen fruit bowl, two-tier, matte black",
                """
                Keep fruit within reach and off the counter. A two-tier steel bowl with a
                detachable banana hook; the open wire design lets air circulate.
            """,
                specs=[
                    ("Material", "powder-coated steel"),
                    ("Size", "28 × 28 × 38 cm"),
                    ("Price", "$24.50"),
                ],
                extra={"price": "$24.50", "rating": "4.6 / 5"},
            ),
        ],
    ),
    topic(
        "102",
        "garden",
        text="best soil mix for raised vegetable beds",
        description="""
            The user is filling raised beds for vegetables and wants to know what soil mix
            to use, in what proportions, and how much of it they need.
        """,
        narrative="""
            A perfect document recommends a specific mix with proportions (for example
            topsoil, compost and an aeration material), explains why, and helps with
            quantity or filling deep beds. Highly relevant documents give a sound mix but
            miss quantities or reasons. Relevant documents discuss parts of the question,
            such as compost quality or bagged mixes. Building raised beds, soil for
            containers or lawns, or general vegetable care are marginal. Raised beds in the
            sense of furniture or hospital beds are not relevant.
        """,
        docs=[
            doc(
                4,
                "guide",
                "Raised bed soil: the mix, the maths and the money",
                """
                The best raised bed soil is a blend, not a single bag. For vegetables, use
                roughly **60% screened topsoil, 30% compost and 10% an aeration material**
                such as fine bark or perlite. Topsoil gives body and holds nutrients,
                compost feeds the soil life and keeps moisture, and the coarse fraction
                stops the mix from slumping into a dense block after a season of watering.

                To work out how much you need, multiply length × width × depth in metres.
                A bed of 2.4 × 1.2 m filled 30 cm deep takes about 0.86 m³, a little less
                than one bulk bag. Buying in bulk is far cheaper than 50-litre sacks for
                anything over two beds.

                For beds deeper than 45 cm, fill the bottom third with logs, branches and
                turf turned upside down, then add the mix on top. Top up with 3–5 cm of
                compost every spring as the bed settles.
            """,
            ),
            doc(
                4,
                "forum",
                "Our 3-year raised bed soil experiment (with numbers)",
                """
                We built six identical 1.2 × 2.4 m beds and filled them with different mixes
                to see which grew the best vegetables. Results after three seasons:

                - 60/30/10 topsoil/compost/bark: best yields every year, least settling.
                - 50/50 topsoil/compost: nearly as good, needed more topping up.
                - Bagged "raised bed mix" only: great year one, then shrank by 10 cm.
                - Pure compost: lush leaves, poor roots, dried out fast in July.

                Each bed took about 0.8 m³ at 28 cm deep. My advice: buy screened topsoil
                and compost in bulk and mix them on a tarp. Add compost each spring.
            """,
                extra={"replies": 42},
            ),
            doc(
                3,
                "guide",
                "Mel's mix, updated: a classic raised bed recipe",
                """
                A famous square-foot gardening recipe calls for equal thirds of compost,
                peat moss and vermiculite. It is light, drains well and holds water, which
                made it popular for shallow beds.

                Many gardeners now swap peat for coir or leaf mould for environmental
                reasons, and some add topsoil to reduce the cost, since vermiculite is
                expensive in quantity. Whatever the recipe, mix it thoroughly before
                filling, and water each layer as you go so it settles evenly.
            """,
            ),
            doc(
                3,
                "faq",
                "Can I fill my raised beds with just compost?",
                """
                You can, but it is not the best choice. Pure compost is rich but shrinks as
                it breaks down, often losing a third of its volume in two years. It also
                dries out quickly and can hold too many nutrients for some crops.

                A blend of topsoil and compost, with compost making up a third to a half,
                gives better structure and holds water more evenly. If you do start with
                compost alone, plan to add topsoil as the level drops.
            """,
            ),
            doc(
                3,
                "blog",
                "Filling a deep raised bed without going broke",
                """
                Tall raised beds look great, but a 75 cm bed can swallow a cubic metre of
                soil. The trick is a technique called hugelkultur: put old logs and thick
                branches in the bottom, then twigs, leaves and upside-down turf, and only
                the top 30–40 cm with a good topsoil and compost blend.

                The wood rots slowly, holding moisture and feeding the bed for years.
                Expect the surface to sink a few centimetres in the first season.
            """,
            ),
            doc(
                2,
                "review",
                "Three bagged raised bed mixes compared",
                """
                We filled one bed each with three bagged raised bed soils from the garden
                centre. GreenStart Premium was the most consistent, with visible bark and
                no lumps. Bloomfield Organic was rich but wet and full of twigs. The budget
                store brand was mostly fine peat and crusted over after a month.

                For small beds, bagged mix saves effort. Beyond a couple of beds, bulk
                topsoil and compost cost about a third as much.
            """,
                extra={"rating": "GreenStart Premium: 4 / 5"},
            ),
            doc(
                2,
                "guide",
                "What makes good compost for vegetable beds",
                """
                Finished compost should be dark, crumbly and smell like a forest floor, with
                no recognisable scraps. Unfinished compost can rob the soil of nitrogen as
                it continues to break down, and hot, sour-smelling compost can burn young
                roots.

                When buying bulk compost, ask whether it is green waste or manure based,
                and whether it has been screened. Green waste compost is a reliable base
                for most beds.
            """,
            ),
            doc(
                2,
                "forum",
                "How much soil do I need for a 4x8 raised bed?",
                """
                Building my first raised bed, 4 ft by 8 ft and 12 in tall. How many bags of
                soil is that?

                Reply from veg_vicky: 4 × 8 × 1 = 32 cubic feet, so about 1.2 cubic yards.
                A 1.5 cu ft bag means 21 or 22 bags. At that size, have a cubic yard of
                topsoil/compost blend delivered and top up with a few bags.
            """,
                extra={"replies": 9},
            ),
            doc(
                1,
                "guide",
                "How to build a cedar raised bed in an afternoon",
                """
                You need six cedar boards of 2 × 8 inches, four corner posts and exterior
                screws. Cut the boards to length, screw them to the posts in two rows, and
                set the frame level on the ground, digging out high spots rather than
                propping up low ones.

                Line the base with cardboard to smother grass. Cedar lasts ten years or more
                without treatment.
            """,
            ),
            doc(
                1,
                "guide",
                "Potting mix for containers: why garden soil fails in pots",
                """
                Garden soil compacts in a container and drains poorly, so roots suffocate.
                For pots, use a soilless potting mix based on coir or peat with perlite or
                bark, and feed regularly because it holds few nutrients. Raised beds are
                different: they are connected to the ground and can hold a topsoil blend.
            """,
            ),
            doc(
                1,
                "blog",
                "Companion planting in a raised vegetable bed",
                """
                Raised beds reward tight planting. Put tall tomatoes on the north side,
                basil and marigolds around them, and carrots and onions in the same rows
                where their different root depths do not compete. Lettuce fills gaps
                between slower crops and is harvested before they need the space.
            """,
            ),
            doc(
                0,
                "product",
                "Adjustable raised bed frame for hospital and home care",
                """
                An adjustable-height bed frame with electric lift, side rails and a
                raised head section, designed for home care. Assembles without tools.
            """,
                specs=[
                    ("Height range", "38–80 cm"),
                    ("Max load", "170 kg"),
                    ("Price", "$1,249"),
                ],
                extra={"price": "$1,249"},
            ),
            doc(
                0,
                "blog",
                "Choosing the best mattress for a raised platform bed",
                """
                A platform bed needs a mattress that does not rely on a box spring. Memory
                foam and hybrid mattresses work well; check that slats are no more than
                7 cm apart. For a high platform, a slimmer mattress keeps getting in and
                out comfortable.
            """,
                site="example-sleep.test",
            ),
            doc(
                0,
                "guide",
                "Soil testing for lawns: pH and what to do about it",
                """
                Most lawn grasses prefer a pH between 6 and 7. A home test kit or a lab test
                tells you where your lawn stands. Acidic soils are corrected with garden
                lime in autumn; alkaline soils with sulphur, slowly and over several
                seasons. Retest every three years.
            """,
            ),
        ],
    ),
    topic(
        "103",
        "garden",
        text="when to prune hydrangeas",
        description="""
            The user wants to know the right time of year to prune their hydrangeas so
            that they still flower.
        """,
        narrative="""
            Timing depends on the type: bigleaf and oakleaf hydrangeas flower on old wood
            and are pruned just after flowering, while panicle and smooth hydrangeas
            flower on new wood and are pruned in late winter or early spring. A perfect
            document explains this by type and helps identify the type. A document giving
            correct timing for one or two types is highly relevant or relevant depending on
            completeness. General hydrangea care, colour changing or deadheading is
            marginal. Other shrubs, or hydrangea-themed products, are not relevant.
        """,
        docs=[
            doc(
                4,
                "guide",
                "When to prune hydrangeas: a type-by-type calendar",
                """
                The most common reason hydrangeas do not flower is pruning at the wrong
                time. Before you cut, work out which kind you have:

                - **Bigleaf (mophead and lacecap) and oakleaf**: flower on last year's
                stems. Prune right after flowering, by late summer at the latest. Cutting in
                autumn or spring removes the flower buds.
                - **Panicle** (cone-shaped flowers): flower on new growth. Prune in late
                winter or early spring, cutting back by a third.
                - **Smooth** (round white heads like 'Annabelle'): flower on new growth. Cut
                to 30–45 cm in late winter.
                - **Climbing**: prune lightly after flowering.

                Not sure of the type? Look at the leaves: large, glossy leaves suggest a
                bigleaf, lobed leaves like an oak an oakleaf, and cone-shaped flower heads a
                panicle. When in doubt, only remove dead wood in spring.
            """,
            ),
            doc(
                4,
                "faq",
                "My hydrangea didn't bloom this year. Did I prune wrong?",
                """
                Probably, if it is a bigleaf or oakleaf hydrangea. These form next year's
                flower buds in late summer, so any cut after August removes them.
                Prune them immediately after the flowers fade, and only remove spent
                heads and dead stems.

                Panicle and smooth hydrangeas are forgiving: they bloom on this year's
                growth, so cut them back in late winter before buds break. To tell them
                apart, panicle types have cone-shaped flowers and smooth types round white
                heads, while bigleafs have mophead or flat lacecap flowers in pink or blue.
            """,
            ),
            doc(
                3,
                "guide",
                "Pruning panicle hydrangeas in late winter",
                """
                Panicle hydrangeas such as 'Limelight' flower on new wood, so you can prune
                them hard without losing blooms. In late winter or very early spring, cut
                each stem back by a third to a half, to just above a pair of buds. Remove
                weak, crossing and dead stems at the base.

                Pruning harder gives fewer but larger flower heads; pruning lightly gives
                more, smaller heads on a bigger shrub.
            """,
            ),
            doc(
                3,
                "forum",
                "When do I cut back my mophead hydrangea?",
                """
                Inherited a big blue mophead hydrangea. When should I prune it?

                Reply from hortensia_helen: mopheads flower on old wood. Deadhead in
                summer, and do any shaping straight after flowering, before the end of
                August. In early spring, only take out dead stems; do not shorten the live
                ones or you cut off this year's flowers. Leave the old flower heads on over
                winter to protect the buds.
            """,
                extra={"replies": 11},
            ),
            doc(
                3,
                "guide",
                "Smooth hydrangea ('Annabelle') pruning made simple",
                """
                Smooth hydrangeas bloom on new wood, so the timing is easy: cut the whole
                plant down to about 30–45 cm in late winter. Many gardeners simply cut it to
                the ground every year. If the stems flop under the weight of the flowers,
                leave them a little taller to build a sturdier framework.
            """,
            ),
            doc(
                2,
                "blog",
                "Oakleaf hydrangeas: four seasons of interest",
                """
                Oakleaf hydrangeas give white flower cones in early summer, rich red autumn
                colour and peeling cinnamon bark in winter. They need little pruning; if you
                must shape them, do it just after flowering, as next year's buds form soon
                after. They tolerate more sun and drier soil than bigleaf types.
            """,
            ),
            doc(
                2,
                "guide",
                "Deadheading hydrangeas: when and how",
                """
                Deadheading keeps hydrangeas tidy. On bigleaf types, snip faded flowers
                just above the first pair of healthy leaves, and stop by late summer so
                next year's buds are not removed. Many gardeners leave the last flowers on
                over winter for frost protection and cut them off in spring.
            """,
            ),
            doc(
                2,
                "news",
                "Why hydrangeas failed to flower after a cold spring",
                """
                Gardeners reported hydrangeas with plenty of leaves but no flowers this
                year. Horticulturists blame a late frost: bigleaf hydrangeas carry their
                flower buds at the tips of last year's stems, and a hard frost in April
                killed many of them. Pruning in spring makes the problem worse.
            """,
                extra={"published": "2024-07-03"},
            ),
            doc(
                1,
                "guide",
                "How to turn hydrangeas blue or pink",
                """
                The flower colour of bigleaf hydrangeas depends on aluminium available in
                the soil, which depends on pH. In acidic soil (pH below 5.5) they turn
                blue; in alkaline soil, pink. Add aluminium sulphate to go blue, or garden
                lime to go pink. White hydrangeas do not change colour.
            """,
            ),
            doc(
                1,
                "guide",
                "Planting hydrangeas: light, soil and watering",
                """
                Plant hydrangeas in spring or autumn, in morning sun and afternoon shade.
                They like rich, moist, well-drained soil; dig in plenty of compost and
                water deeply once a week in dry spells. Mulch to keep roots cool.
            """,
            ),
            doc(
                1,
                "forum",
                "Hydrangea leaves turning brown at the edges",
                """
                The leaves on my hydrangea have crispy brown edges. Is it a disease?

                Reply from shade_gardener: usually too much sun or dry roots. Water
                deeply, mulch, and consider moving it somewhere with afternoon shade in
                autumn.
            """,
                extra={"replies": 5},
            ),
            doc(
                0,
                "guide",
                "When to prune roses: spring, summer and autumn",
                """
                Prune most roses in late winter or early spring, as buds begin to swell.
                Remove dead and diseased wood, then cut to an outward-facing bud. Deadhead
                repeat-flowering roses through summer, and shorten long stems in autumn to
                prevent wind rock.
            """,
            ),
            doc(
                0,
                "product",
                "Hydrangea print linen tablecloth",
                """
                A soft linen tablecloth printed with watercolour blue hydrangeas, for
                summer garden parties. Machine washable.

                Woven from stonewashed European flax, so it is soft from the first use and gets
                softer with every wash. The print is hand-painted by our studio and printed with
                water-based inks. Pair it with the matching napkins for a relaxed summer table.
            """,
                specs=[("Size", "150 × 250 cm"), ("Price", "$59")],
                extra={"price": "$59"},
            ),
            doc(
                0,
                "guide",
                "Pruning fruit trees in winter",
                """
                Winter, when trees are dormant, is the time to prune apples and pears. Take
                out dead, diseased and crossing branches, then thin the centre to let light
                in. Do not prune plums and cherries in winter; they are pruned in summer to
                avoid silver leaf disease.
            """,
            ),
        ],
    ),
    topic(
        "104",
        "home",
        text="toilet keeps running after flush",
        description="""
            The user's toilet keeps running or refilling after flushing, and they want to
            diagnose and fix it themselves.
        """,
        narrative="""
            A perfect document explains how to diagnose the cause (flapper not sealing,
            fill valve or float set too high, chain problems) and how to fix each. A
            document covering one cause thoroughly, such as replacing the flapper, is
            highly relevant. Partial or very brief fixes are relevant. Other toilet
            problems (clogs, a wobbly toilet, weak flush) are marginal. Other things that
            "run", or general plumbing costs, are not relevant.
        """,
        docs=[
            doc(
                4,
                "guide",
                "Why your toilet keeps running, and how to fix it",
                """
                A running toilet can waste hundreds of litres a day. The cause is almost
                always inside the tank. Take the lid off and flush once while you watch.

                1. **Water spilling into the overflow tube?** The fill valve shuts off too
                late. Lower the float by turning the adjustment screw or sliding the clip,
                so the water stops 2–3 cm below the top of the tube.
                2. **Water level fine, but the tank slowly empties?** The flapper is not
                sealing. Add a few drops of food colouring to the tank; if colour appears
                in the bowl within 15 minutes, replace the flapper.
                3. **Flapper will not close fully?** The chain may be too short or caught.
                Leave about a finger's width of slack.
                4. **Fill valve hisses or never stops?** Replace the fill valve; universal
                kits fit most toilets.

                Turn off the water at the stop valve and flush to empty the tank before any
                part swap. A flapper costs a few dollars and takes ten minutes.
            """,
            ),
            doc(
                4,
                "forum",
                "Running toilet fixed for $6: step-by-step with photos",
                """
                Our upstairs toilet refilled every 20 minutes all night. Here is how I found
                and fixed it without a plumber.

                I put blue food colouring in the tank and waited: blue water in the bowl,
                so the flapper was leaking. Turned off the supply valve, flushed, unhooked
                the old flapper from the pegs on the overflow tube. The rubber was warped
                and slimy. Took it to the hardware store and bought a matching 2-inch one.

                Fitting it took five minutes. I set the chain with a little slack, turned
                the water on and also lowered the float a bit because water was trickling
                into the overflow. Silent ever since.
            """,
                extra={"replies": 23},
            ),
            doc(
                3,
                "guide",
                "How to replace a toilet flapper",
                """
                A worn flapper is the most common cause of a toilet that runs or refills on
                its own. Shut off the water, flush, and unhook the flapper's ears from the
                overflow tube and its chain from the handle lever. Take it to the store to
                match the size, usually 2 or 3 inches.

                Fit the new one, attach the chain with about 1 cm of slack, restore the
                water and test with food colouring in the tank.
            """,
            ),
            doc(
                3,
                "faq",
                "How do I adjust the water level in my toilet tank?",
                """
                If water runs into the overflow tube, the level is too high. On a modern
                fill valve, turn the adjustment screw on top or squeeze the clip and slide
                the float cup down. On an older ball float, gently bend the float arm
                downwards. The water should stop about 2–3 cm below the top of the overflow
                tube.
            """,
            ),
            doc(
                3,
                "guide",
                "Replacing a noisy or faulty toilet fill valve",
                """
                When a toilet hisses, refills slowly or never quite stops, replace the fill
                valve. Turn off the supply, flush, sponge out the remaining water and
                disconnect the supply line. Unscrew the locknut under the tank and lift the
                old valve out.

                Set the new valve to the height marked on the overflow tube, tighten the
                locknut by hand plus a quarter turn, connect the refill tube and turn the
                water back on.
            """,
            ),
            doc(
                2,
                "blog",
                "The food colouring test every homeowner should know",
                """
                A silent leak in the toilet tank can add a surprising amount to your water
                bill. Once a year, drop some food colouring in each tank and do not flush
                for fifteen minutes. If colour appears in the bowl, the flapper is leaking
                and should be replaced.
            """,
            ),
            doc(
                2,
                "product",
                "FlushRight universal toilet repair kit",
                """
                Everything needed to fix a running toilet in one box: an adjustable fill
                valve, a 2-inch flapper with stainless chain and a refill tube. Fits most
                two-piece toilets.
            """,
                specs=[
                    ("Includes", "fill valve, flapper, chain, refill tube"),
                    ("Fits", "tank heights 22–36 cm"),
                    ("Price", "$19.97"),
                ],
                extra={"price": "$19.97", "rating": "4.4 / 5"},
            ),
            doc(
                2,
                "forum",
                "Toilet runs for a second every half hour (phantom flush)",
                """
                Every 30 minutes or so our toilet refills for a couple of seconds. No one
                has used it.

                Reply from pipe_dreams: that is a phantom flush. Water is seeping from the
                tank into the bowl, usually past the flapper. Clean the flapper seat with a
                scouring pad or replace the flapper.
            """,
                extra={"replies": 4},
            ),
            doc(
                1,
                "guide",
                "How to unclog a toilet without a plunger",
                """
                Squirt dish soap into the bowl, then pour in a bucket of hot (not boiling)
                water from waist height. Wait fifteen minutes. If that fails, a wire coat
                hanger or a toilet auger will reach most clogs.
            """,
            ),
            doc(
                1,
                "guide",
                "Fixing a wobbly toilet",
                """
                A toilet that rocks can break its wax seal and leak under the floor. Check
                the closet bolts at the base and tighten them gently, alternating sides. If
                it still rocks, slide plastic shims under the low side and caulk around the
                base.
            """,
            ),
            doc(
                1,
                "faq",
                "Why is my toilet flush weak?",
                """
                A weak flush usually means the water level in the tank is too low, the
                chain has too much slack, or the rim holes under the bowl's rim are blocked
                by mineral deposits. Clean the holes with a wire and vinegar.
            """,
            ),
            doc(
                0,
                "guide",
                "How to keep your car engine running smoothly",
                """
                Regular oil changes, clean air filters and fresh spark plugs keep an engine
                running well. If the engine keeps running after you switch it off, a
                condition called dieseling, have the idle and timing checked.
            """,
                site="example-auto.test",
            ),
            doc(
                0,
                "blog",
                "Couch to 5K: keep running after the first week",
                """
                The first week of a beginner running plan is exciting; the second is where
                most people stop. Schedule runs like appointments, find a partner, and
                repeat a week rather than quitting if it feels too hard.
            """,
                site="example-fitness.test",
            ),
            doc(
                0,
                "news",
                "How much does a plumber cost in 2025?",
                """
                Call-out fees for plumbers in most cities now range from $75 to $150, with
                hourly rates between $90 and $180. Emergency and weekend work costs more.
                Always ask for a written quote.

                Simple jobs such as replacing a tap washer are often billed as a fixed fee,
                while bigger work like moving a bathroom is quoted per project. Prices run
                highest in large cities and lowest in rural areas, where travel time may be
                added. A licensed plumber should be happy to explain what is included, and many
                offer a free estimate for larger jobs.
            """,
                extra={"published": "2025-02-11"},
            ),
            doc(
                0,
                "product",
                "Dual-flush toilet, elongated, white",
                """
                A water-saving two-piece toilet with a 4.1 / 6 litre dual flush, soft-close
                seat and comfort height.

                The skirted trapway is easy to wipe clean, and the rimless bowl leaves fewer
                places for grime to hide. Supplied with wax ring, bolts and a quick-release seat
                for cleaning.
            """,
                specs=[("Flush", "4.1 / 6 L"), ("Price", "$289")],
                extra={"price": "$289"},
            ),
        ],
    ),
    topic(
        "105",
        "home",
        text="cordless drill vs impact driver",
        description="""
            The user is deciding whether to buy a cordless drill, an impact driver or both
            and wants to understand the difference.
        """,
        narrative="""
            A perfect document compares the two tools directly: how they work (clutch vs
            hammering rotational impacts), torque, chucks and bits, what each does best,
            and advice on which to buy first. A thorough comparison without buying advice
            is highly relevant. A review or explanation of only one of the tools is
            relevant if it says what it is for. Hammer drills, combo kits or battery
            platforms are marginal. Pages about other meanings of "driver" or other tools
            are not relevant.
        """,
        docs=[
            doc(
                4,
                "guide",
                "Drill or impact driver? What each tool is really for",
                """
                They look alike, but they work differently. A **drill/driver** spins
                smoothly and has an adjustable clutch that slips at a set torque, so you can
                drive small screws without stripping them. Its keyless chuck takes round
                and hex bits, which makes it the tool for drilling holes.

                An **impact driver** adds rapid rotational hammer blows when it meets
                resistance. It delivers two to three times the torque of a drill, with less
                twisting of your wrist, and drives long screws and lag bolts with ease. It
                takes only 1/4-inch hex bits and has no clutch, so it is easy to overdrive
                small screws.

                Which first? For a first toolbox, a drill/driver does more jobs. If you
                build decks, fences or frames, add an impact driver: many brands sell both
                as a kit sharing one battery, and using them together saves swapping bits.
            """,
            ),
            doc(
                4,
                "review",
                "Drill vs impact driver: we drove 500 screws to find out",
                """
                We drove 500 deck screws and drilled 200 holes with a mid-range drill/driver
                and an impact driver from the same brand. The impact driver sank 75 mm
                screws into pressure-treated timber twice as fast, on less battery, and
                without wrist strain. The drill needed pilot holes for the same job.

                But the drill won everywhere else: clean holes with spade and twist bits,
                mixing paint, and delicate screws in hinges thanks to its clutch. Our
                verdict: buy a drill first, add an impact driver when you start building.
            """,
                extra={"published": "2024-03-18"},
            ),
            doc(
                3,
                "faq",
                "What is an impact driver and how is it different from a drill?",
                """
                An impact driver is a compact tool that combines rotation with quick
                tangential blows, like a hammer tapping a wrench. That lets it drive long
                screws with much more torque than a drill. Unlike a drill, it has a quick
                release hex collet instead of a chuck and no clutch, so it is a driving
                tool first; it can drill with hex-shank bits, but not precisely.
            """,
            ),
            doc(
                3,
                "blog",
                "Why I use both a drill and an impact driver",
                """
                When I build cabinets, I keep two tools on the bench: the drill with a
                countersink bit, and the impact driver with a screw bit. Drill, drive,
                repeat, no bit changes. The clutch on the drill is for hardware and small
                brass screws; the impact driver is for everything structural.
            """,
            ),
            doc(
                3,
                "forum",
                "First cordless tool: drill or impact driver?",
                """
                Just bought a house. Which should I get first?

                Reply from joiner_jo: drill. It hangs shelves, drills holes, drives most
                screws. The impact driver is brilliant for long screws and bolts but it
                cannot drill a neat hole or drive small screws gently.

                Reply from deckbuilder: agree, unless you are building a deck this summer.
            """,
                extra={"replies": 31},
            ),
            doc(
                2,
                "review",
                "Review: Voltaro 18V brushless drill/driver",
                """
                The Voltaro 18V drill/driver is light, balanced and has a 22-position clutch
                that stopped reliably on small screws. With 60 Nm of torque it drilled 25 mm
                holes in pine easily. It is a great general-purpose drill, though it labours
                with long structural screws, which is where an impact driver shines.
            """,
                extra={"rating": "4.5 / 5"},
            ),
            doc(
                2,
                "product",
                "Voltaro 18V impact driver, bare tool",
                """
                Compact brushless impact driver with three speed modes and a 1/4-inch hex
                collet. Delivers 180 Nm for lag bolts, long deck screws and fixing into
                timber framing.
            """,
                specs=[
                    ("Torque", "180 Nm"),
                    ("Impacts per minute", "0–3,600"),
                    ("Weight", "1.1 kg with battery"),
                    ("Price", "$99 (bare tool)"),
                ],
                extra={"price": "$99", "rating": "4.7 / 5"},
            ),
            doc(
                2,
                "guide",
                "How to use a drill's clutch settings",
                """
                The numbered ring behind the chuck is the clutch. Lower numbers slip at
                lower torque, protecting small screws and soft materials; higher numbers
                drive bigger screws. The drill symbol locks the clutch for drilling. Start
                low and increase until the screw sits flush.
            """,
            ),
            doc(
                1,
                "guide",
                "Hammer drill vs regular drill: do you need one?",
                """
                A hammer drill adds a forward pounding action for drilling into brick,
                block and concrete. For occasional wall plugs it is all you need; for
                regular concrete work, a rotary hammer is faster. In wood and metal, turn
                the hammer function off.
            """,
            ),
            doc(
                1,
                "review",
                "Best cordless combo kits of the year",
                """
                Combo kits bundle tools with shared batteries at a discount. Most start with
                a drill/driver and an impact driver, then add a circular saw, a reciprocating
                saw and a light. Pick a battery platform you will stick with; batteries are
                the expensive part.
            """,
                extra={"published": "2025-01-09"},
            ),
            doc(
                1,
                "faq",
                "Are 18V and 20V max batteries the same?",
                """
                Yes, in practice. Cells are nominally 3.6 V, so five in series make 18 V
                nominal, or 20 V at full charge. Different brands label the same voltage
                differently; the amp-hour rating matters more for run time.
            """,
            ),
            doc(
                0,
                "faq",
                "How to update your graphics card driver",
                """
                Open the device manager, find the display adapter, and choose update
                driver, or download the latest driver package from the card maker's site.
                Restart after installing.

                If a new driver causes crashes or flickering, roll back to the previous version
                from the same menu. Gamers should update before major game releases, since new
                drivers often include performance fixes. Laptop users may need the driver from
                the laptop maker rather than the chip maker.
            """,
                site="example-tech.test",
            ),
            doc(
                0,
                "blog",
                "Choosing the right golf driver for your swing speed",
                """
                A driver with the right loft and shaft flex can add yards. Slower swing
                speeds benefit from more loft, 10.5 to 12 degrees, and a flexible shaft.

                Faster swingers, above about 105 mph, usually do better with 9 degrees of loft
                and a stiff shaft to keep the ball flight down. A fitting session at a range
                with a launch monitor takes the guesswork out, and many shops will let you try
                demo clubs first.
            """,
                site="example-golf.test",
            ),
            doc(
                0,
                "news",
                "Ride-share drivers push for fair pay",
                """
                Drivers for several ride-share apps rallied this week for minimum pay
                standards, citing rising fuel and insurance costs.

                Organisers say many drivers now work longer hours for less than they earned
                three years ago. The companies argue that flexible schedules are what drivers
                value most, and warn that minimum pay rules could raise fares for riders.
                Lawmakers are expected to debate a bill next month.
            """,
                extra={"published": "2024-09-22"},
            ),
            doc(
                0,
                "product",
                "Precision screwdriver set, 32 bits",
                """
                Magnetic screwdriver with 32 precision bits for phones, laptops and
                glasses. Aluminium handle and storage case.

                Includes Phillips, slotted, Torx, pentalobe and tri-wing bits for small
                electronics, plus a flexible extension and a spudger for opening cases.
            """,
                specs=[("Bits", "32"), ("Price", "$14.99")],
                extra={"price": "$14.99"},
            ),
        ],
    ),
]
