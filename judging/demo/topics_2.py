"""Demo topics 106–110: shower grout, tomato leaves, dishwashers, sinks, lawn mowers."""

from __future__ import annotations

from .spec import doc, topic

TOPICS = [
    topic(
        "106",
        "home",
        text="remove black mold from shower grout",
        description="""
            The user has black mould in the grout lines of their shower and wants to clean
            it off and stop it from returning.
        """,
        narrative="""
            A perfect document gives a safe, effective cleaning method (for example an
            oxygen bleach or diluted chlorine bleach paste, with ventilation and never
            mixing cleaners), says what to do when the stain has gone into the grout
            (regrouting) and how to prevent regrowth (ventilation, drying, sealing).
            Cleaning steps without prevention or regrouting advice are highly relevant.
            Products or single tips are relevant. Mould elsewhere (walls, caulk, clothes)
            or general bathroom cleaning is marginal. Mould in food, gardens or medicine
            is not relevant.
        """,
        docs=[
            doc(
                4,
                "guide",
                "Getting black mould out of shower grout for good",
                """
                Black spots in grout are mould feeding on soap film in a surface that stays
                damp. Clean first, then change the conditions that let it grow.

                1. Open a window or run the fan, and wear gloves.
                2. Mix oxygen bleach powder with warm water into a paste, or use one part
                household bleach to four parts water on white grout. Never combine bleach
                with vinegar or ammonia cleaners.
                3. Apply along the grout lines, leave for 15 minutes and scrub with a stiff
                grout brush. Rinse well.
                4. Let the grout dry completely for a day, then apply a penetrating grout
                sealer.

                If dark stains remain after two treatments, the mould is deep in the grout:
                scrape out the top few millimetres and regrout. To prevent it returning,
                squeegee the walls after each shower and run the extractor for 20 minutes.
            """,
            ),
            doc(
                4,
                "forum",
                "Grout mould: what finally worked after years of scrubbing",
                """
                Our shower grout went black every few months. What changed it:

                I stopped using vinegar sprays and switched to an oxygen bleach paste left
                on for 20 minutes, then scrubbed with an electric brush. That got most of it.
                In two corners the grout stayed grey, so I raked it out and regrouted, which
                was easier than I feared.

                Then prevention: sealed the grout, bought a squeegee for everyone in the
                house, and replaced the weak bathroom fan with one that actually moves air,
                on a timer. Eight months and still clean.
            """,
                extra={"replies": 38},
            ),
            doc(
                3,
                "guide",
                "How to clean grout with baking soda and oxygen bleach",
                """
                For routine grout cleaning, sprinkle baking soda on damp grout, then spray
                with a solution of oxygen bleach. Let it fizz for ten minutes, scrub with an
                old toothbrush or grout brush, and rinse. It lifts mould stains and soap
                scum without the fumes of chlorine bleach and is safe on coloured grout.
            """,
            ),
            doc(
                3,
                "faq",
                "Is it safe to use bleach on mouldy grout?",
                """
                Diluted chlorine bleach (about one part to four parts water) is effective on
                white, sealed grout in a well-ventilated room. Wear gloves and do not mix it
                with other cleaners, especially those with ammonia or acids, which release
                toxic gases. On coloured grout, use oxygen bleach instead, as chlorine can
                fade it.
            """,
            ),
            doc(
                3,
                "blog",
                "When cleaning is not enough: regrouting a mouldy shower",
                """
                If grout is cracked, crumbling or stays stained after cleaning, regrouting
                is the lasting fix. Rake out the old grout with a grout saw, vacuum the
                joints, press in new grout with a rubber float and wipe off the haze. Seal
                after 72 hours. A small shower takes a weekend.
            """,
            ),
            doc(
                2,
                "product",
                "MoldAway gel for grout and sealant",
                """
                A thick gel that clings to vertical grout lines and silicone joints and
                removes black mould stains in hours. Apply with the precision nozzle, leave
                for 4–6 hours and rinse. Contains sodium hypochlorite: ventilate the room.
            """,
                specs=[
                    ("Volume", "300 ml"),
                    ("Use on", "grout, silicone sealant"),
                    ("Price", "$8.49"),
                ],
                extra={"price": "$8.49", "rating": "4.2 / 5"},
            ),
            doc(
                2,
                "forum",
                "Does vinegar kill mould on grout?",
                """
                Everyone online says vinegar kills mould. Is it good enough for shower
                grout?

                Reply from tiler_tom: vinegar works on light surface mould, but it is an
                acid and regular use etches cement grout. Oxygen bleach is kinder to grout
                and works better.
            """,
                extra={"replies": 12},
            ),
            doc(
                2,
                "guide",
                "Sealing grout: why, when and how",
                """
                Cement grout is porous and absorbs water and soap, which is what mould
                feeds on. A penetrating sealer slows this down. Apply it to clean, fully dry
                grout with a small brush, wipe off any excess on the tiles, and reseal every
                year in a shower.
            """,
            ),
            doc(
                1,
                "guide",
                "Replacing mouldy silicone caulk around the tub",
                """
                Mould that has grown under silicone cannot be cleaned out. Cut the old bead
                away with a utility knife, remove the residue, clean with alcohol and let it
                dry before running a new bead of mould-resistant silicone.
            """,
                also={"112": 2},
            ),
            doc(
                1,
                "guide",
                "Dealing with mould on bedroom walls",
                """
                Mould on walls usually means condensation. Wipe it off with a mould
                remover, then tackle the cause: ventilate after cooking and showering,
                keep furniture away from cold external walls and keep rooms heated evenly.
            """,
            ),
            doc(
                1,
                "blog",
                "A 15-minute weekly bathroom cleaning routine",
                """
                Spray and wipe the sink and toilet, squeegee the shower glass, wipe the
                mirror, and mop the floor last. A quick weekly routine stops soap scum and
                grime from building up into a weekend-long job.
            """,
            ),
            doc(
                0,
                "guide",
                "Is it safe to eat bread with a spot of mould?",
                """
                No. Mould on soft foods like bread sends roots you cannot see through the
                whole loaf. Throw it out. Hard cheeses are the exception: cut at least
                2 cm around and below the spot.

                Firm fruit and vegetables such as carrots or cabbage can be saved the same way
                as hard cheese, but soft fruit, yoghurt, jam and cooked leftovers should go in
                the bin. Keep bread in a cool, dry place, or freeze it if you will not finish it
                within a few days.
            """,
                site="example-kitchen.test",
            ),
            doc(
                0,
                "guide",
                "Sooty mould on plant leaves",
                """
                A black, powdery coating on leaves is sooty mould. It grows on honeydew
                left by aphids, scale insects and whitefly, so treat the insects and the
                mould will weather away.

                The coating itself does not infect the plant, but it blocks light and slows
                growth. Wipe small plants with a damp cloth and a drop of soap; on shrubs, a
                strong spray of water removes much of it. Ants farming the aphids for honeydew
                are a common clue, so check for them too.
            """,
                area="garden",
            ),
            doc(
                0,
                "news",
                "The history of penicillin and the mould that changed medicine",
                """
                The discovery that a common mould could kill bacteria changed medicine,
                though it took more than a decade and a wartime production effort before
                penicillin was widely available.

                By the end of the Second World War, mass production in deep fermentation tanks
                had made the drug cheap enough for widespread use. Today, the rise of antibiotic
                resistance has renewed interest in finding new compounds from soil microbes and
                fungi.
            """,
            ),
            doc(
                0,
                "product",
                "Grout colour pen, white, for tile refresh",
                """
                Renew tired grout lines with a water-based colour pen. Covers stains and
                discolouration cosmetically; not a cleaner.
            """,
                specs=[("Colour", "bright white"), ("Price", "$6.99")],
                extra={
                    "price": "$6.99",
                },
            ),
        ],
    ),
    topic(
        "107",
        "garden",
        text="tomato leaves turning yellow",
        description="""
            The user's tomato plants have yellowing leaves and they want to know the cause
            and what to do about it.
        """,
        narrative="""
            A perfect document helps diagnose the likely causes of yellow tomato leaves
            (natural ageing of lower leaves, nitrogen or magnesium deficiency, over- or
            under-watering, early blight, septoria leaf spot, wilt diseases) by their
            pattern and gives a remedy for each. Documents that cover one or two causes
            well are highly relevant or relevant. General tomato growing, tomato problems
            that are not leaf yellowing (blossom end rot, splitting), or yellowing in other
            plants are marginal. Recipes or yellow tomato varieties are not relevant.
        """,
        docs=[
            doc(
                4,
                "guide",
                "Yellow leaves on tomatoes: a diagnosis chart",
                """
                Where the yellowing starts tells you most of what you need to know.

                - **Lowest leaves only, late in the season, plant otherwise healthy**:
                normal ageing. Remove them.
                - **Older leaves yellow evenly, plant pale**: nitrogen deficiency. Feed with
                a balanced liquid fertiliser.
                - **Yellow between green veins on older leaves**: magnesium deficiency. Spray
                with Epsom salts, one tablespoon per litre.
                - **Yellow with brown target-like rings, starting low**: early blight.
                Remove affected leaves, mulch, water at the base.
                - **Many small spots with grey centres**: septoria leaf spot. Same cleanup.
                - **Yellowing on one side, wilting in the heat**: fusarium or verticillium
                wilt. No cure; remove the plant and choose resistant varieties next year.
                - **Yellow and limp in wet soil**: over-watering or poor drainage.
            """,
            ),
            doc(
                4,
                "faq",
                "Why are my tomato leaves turning yellow?",
                """
                Start at the bottom of the plant. Yellowing lower leaves with no spots, on
                a plant that is growing well, are just the plant shedding old leaves. If
                yellowing climbs the plant, it is usually hungry for nitrogen; feed it. If
                the veins stay green, it needs magnesium.

                Spots matter: brown rings mean early blight, tiny dark spots septoria leaf
                spot; remove affected leaves and keep the foliage dry. Plants in pots often
                yellow from irregular watering: water deeply when the top few centimetres
                are dry. A plant that wilts by day despite moist soil may have wilt disease.
            """,
            ),
            doc(
                3,
                "guide",
                "Early blight on tomatoes: identify and control",
                """
                Early blight appears as brown spots with concentric rings, surrounded by
                yellow tissue, on the lowest leaves first. It spreads upward in warm, wet
                weather. Remove infected leaves, mulch to stop soil splashing onto foliage,
                water at the base in the morning and space plants for airflow. Rotate
                tomatoes to a new bed each year.
            """,
            ),
            doc(
                3,
                "forum",
                "Tomato leaves yellow between the veins, help!",
                """
                My greenhouse tomatoes have leaves going yellow between the veins, veins
                still green, mostly the older leaves. Fruit is setting fine.

                Reply from allotment_al: classic magnesium deficiency, common when you feed
                a lot of high-potash tomato food. Epsom salts foliar spray once a week for a
                month sorts it.
            """,
                extra={"replies": 8},
            ),
            doc(
                3,
                "blog",
                "Are you killing your tomatoes with kindness? Over-watering",
                """
                Tomatoes in heavy soil or pots without drainage often yellow and droop, and
                gardeners respond by watering more. Roots that sit in water cannot take up
                nutrients, so the leaves yellow. Check the soil a finger deep before
                watering, and make sure pots drain freely.
            """,
            ),
            doc(
                2,
                "guide",
                "Feeding tomatoes through the season",
                """
                Mix compost into the planting hole. Once the first truss sets fruit, switch
                to a high-potash tomato feed every week. Too much nitrogen early on gives
                lush leaves and few flowers; too little leaves plants pale with yellowing
                older leaves.
            """,
            ),
            doc(
                2,
                "forum",
                "Tomato plant wilting and yellowing on one side",
                """
                One of my tomato plants has leaves yellowing and wilting on one side only,
                even though the soil is moist.

                Reply from plantdoc: sounds like fusarium wilt. Cut the stem near the base;
                brown streaks inside confirm it. Pull the plant and do not grow tomatoes in
                that spot for a few years.
            """,
                extra={"replies": 5},
            ),
            doc(
                2,
                "news",
                "Wet summer brings septoria to tomato gardens",
                """
                Extension services report a surge in septoria leaf spot after weeks of rain.
                The fungus causes small circular spots on lower leaves, which then yellow
                and drop. Gardeners are advised to remove infected leaves and avoid
                overhead watering.
            """,
                extra={"published": "2024-08-14"},
            ),
            doc(
                1,
                "guide",
                "Blossom end rot: causes and prevention",
                """
                A dark, sunken patch at the bottom of tomato fruit is blossom end rot. It
                is caused by calcium not reaching the fruit, usually because of irregular
                watering, not a lack of calcium in the soil. Water deeply and consistently,
                and mulch.
            """,
            ),
            doc(
                1,
                "guide",
                "Why are my cucumber leaves turning yellow?",
                """
                Cucumber leaves yellow with nitrogen shortage, over-watering or powdery
                mildew, which starts as white patches. Feed regularly, water at the base
                and pick off badly affected leaves.

                A yellow mosaic pattern with puckered leaves points to cucumber mosaic virus,
                spread by aphids; there is no cure, so remove the plant. Older leaves yellowing
                at the end of the season is normal.
            """,
            ),
            doc(
                1,
                "blog",
                "Growing tomatoes in containers on a balcony",
                """
                Choose a compact or bush variety, a pot of at least 20 litres and a sunny
                spot. Water daily in summer and feed weekly once fruit forms. Support the
                plant with a cane before it gets heavy.

                Wind can be harsh several floors up, so tie the stem loosely in several places
                and choose a sheltered corner. A saucer under the pot catches run-off but empty
                it after watering so the roots do not sit in water. Cherry varieties ripen
                reliably even in a short summer.
            """,
            ),
            doc(
                0,
                "blog",
                "Roasted yellow tomato soup",
                """
                Halve two kilos of ripe yellow tomatoes, roast with garlic and olive oil
                until blistered, then blend with stock and a splash of cream. The soup is
                sunny gold and milder than a red tomato soup.
            """,
                site="example-kitchen.test",
            ),
            doc(
                0,
                "product",
                "Golden Cherry tomato seeds, 30 seeds",
                """
                A prolific cherry tomato with sweet yellow fruit. Indeterminate; grow in a
                greenhouse or a sheltered sunny spot.
            """,
                specs=[("Days to harvest", "65"), ("Price", "$3.25")],
                extra={
                    "price": "$3.25",
                },
            ),
            doc(
                0,
                "guide",
                "Why do leaves change colour in autumn?",
                """
                As days shorten, trees stop making chlorophyll, revealing the yellow and
                orange pigments that were there all along. Reds come from anthocyanins made
                in autumn, most vivid after sunny days and cool nights.
            """,
            ),
        ],
    ),
    topic(
        "108",
        "home",
        text="quietest dishwasher under $800",
        description="""
            The user is shopping for a very quiet built-in dishwasher with a budget of up
            to about $800 and wants recommendations.
        """,
        narrative="""
            A perfect document recommends or compares specific dishwashers priced up to
            about $800 with their noise levels in dB(A), and explains what the numbers
            mean. Reviews or comparisons of quiet models without prices, or quiet models
            above budget, are highly relevant or relevant depending on detail. A single
            product page with its noise level is relevant. Installation, dishwasher
            troubleshooting or general buying guides without noise are marginal.
            Portable tabletop machines, other quiet appliances and washing dishes by hand
            are not relevant.
        """,
        docs=[
            doc(
                4,
                "review",
                "The quietest dishwashers under $800, measured",
                """
                We ran every dishwasher on its normal cycle in our test kitchen and measured
                noise at one metre. Anything under 44 dB(A) is quiet enough to hold a
                conversation next to it; each 3 dB is roughly a doubling of sound energy.

                - **Hushline 300 Series**: 42 dB(A), $749. Third rack, excellent drying.
                - **Nordvik Silence 45**: 44 dB(A), $699. Best value, slightly slower.
                - **Avalon QuietClean**: 45 dB(A), $629. Basic racks but very quiet.
                - **Brightwater Pro 800**: 43 dB(A), $799. Quietest stainless tub at the
                top of the budget.

                Under $500, expect 47–50 dB(A). Installation matters too: a dishwasher that
                is not levelled and anchored vibrates and sounds louder than its rating.
            """,
                extra={"published": "2025-03-04"},
            ),
            doc(
                4,
                "forum",
                "Quiet dishwasher for an open-plan kitchen, under $800?",
                """
                Our kitchen opens onto the living room. Which dishwasher can I run during
                movie night, budget around $800?

                Reply from appliance_anna: I sell these. Hushline 300 (42 dB, about $750)
                is the one people come back happy about. Nordvik Silence 45 is $100 cheaper
                and you will not hear much difference. Avoid anything over 46 dB for open
                plan.

                Reply from quiet_home: Our Brightwater Pro 800 (43 dB) is inaudible from
                the sofa. Ask for the anti-vibration kit at installation.
            """,
                extra={"replies": 19},
            ),
            doc(
                3,
                "review",
                "Hushline 300 Series review: whisper quiet",
                """
                At 42 dB(A) the Hushline 300 Series is one of the quietest dishwashers we
                have tested; we had to open the door to check it was running. Cleaning was
                excellent and the third rack is useful for cutlery. Drying plastics needs
                the extra-dry option.
            """,
                extra={"rating": "4.6 / 5"},
            ),
            doc(
                3,
                "guide",
                "Dishwasher decibels explained",
                """
                Dishwasher noise is quoted in dB(A) on the normal cycle. Around 50 dB is
                like a quiet conversation; 44 dB and below is quiet; 40 dB is nearly silent.
                Because the scale is logarithmic, 42 dB is about half as loud to the ear
                as 52 dB. A stainless tub, insulation and a brushless motor are what make
                the quietest models quiet.
            """,
            ),
            doc(
                3,
                "review",
                "Premium quiet dishwashers worth the money",
                """
                If budget is no object, the quietest dishwashers reach 38–40 dB(A). The
                Brightwater Signature runs at 39 dB(A) for $1,299 and the Hushline 800 at
                40 dB(A) for $1,149. Below $800 the best you can expect is about 42 dB(A).
            """,
                extra={"published": "2024-11-20"},
            ),
            doc(
                2,
                "product",
                "Nordvik Silence 45 built-in dishwasher, 24 in",
                """
                A quiet, efficient built-in dishwasher with a stainless tub and adjustable
                upper rack. Runs at 44 dB(A). Six programmes including eco and quick.
            """,
                specs=[
                    ("Noise", "44 dB(A)"),
                    ("Capacity", "14 place settings"),
                    ("Price", "$699"),
                ],
                extra={"price": "$699", "rating": "4.3 / 5"},
            ),
            doc(
                2,
                "product",
                "Avalon QuietClean 24-inch dishwasher, white",
                """
                Simple controls, a stainless steel tub and a quiet 45 dB(A) wash. Half-load
                option and delay start.
            """,
                specs=[
                    ("Noise", "45 dB(A)"),
                    ("Capacity", "12 place settings"),
                    ("Price", "$629"),
                ],
                extra={"price": "$629", "rating": "4.0 / 5"},
            ),
            doc(
                2,
                "faq",
                "Why is my new dishwasher louder than advertised?",
                """
                Rated noise is measured in a lab. At home, a machine that is not levelled or
                secured to the counter vibrates, and an open cabinet base or hard floor
                amplifies it. Check the levelling feet and mounting brackets, and fit the
                noise-insulation blanket if your model came with one.
            """,
            ),
            doc(
                1,
                "guide",
                "How to install a built-in dishwasher",
                """
                Shut off power and water, slide out the old unit, connect the water supply
                with a new braided hose, route the drain hose with a high loop, and level
                the machine before screwing it to the counter. Run an empty cycle and check
                for leaks.
            """,
            ),
            doc(
                1,
                "guide",
                "Dishwasher not draining? Check these first",
                """
                Clean the filter at the bottom of the tub, check the drain hose for kinks,
                and make sure the garbage disposal knockout plug was removed if the
                dishwasher was just installed.

                If water still stands in the tub, listen during the drain cycle: a humming drain
                pump that does not move water may be jammed with glass or a fruit stone. Unplug
                the machine before reaching into the sump.
            """,
            ),
            doc(
                1,
                "review",
                "Dishwasher buying guide: size, racks and energy",
                """
                Measure the opening first: most built-ins are 24 inches wide. Look for an
                adjustable upper rack, a third rack for cutlery and a high energy rating.
                Models with soil sensors use less water on light loads.
            """,
            ),
            doc(
                0,
                "product",
                "Countertop portable dishwasher, 4 place settings",
                """
                A compact dishwasher for small kitchens that connects to the tap; no
                installation needed. Built-in water tank option.
            """,
                specs=[("Capacity", "4 place settings"), ("Price", "$329")],
                extra={
                    "price": "$329",
                },
            ),
            doc(
                0,
                "review",
                "The quietest refrigerators we have tested",
                """
                The quietest fridges hum along at under 35 dB(A). Inverter compressors are
                the key, since they vary speed rather than switching on and off.

                We measured each fridge at one metre in a quiet room, during compressor start-up
                and at steady running. Placement matters: a fridge pushed against a wall or set
                on an uneven floor rattles and hums louder than its rating. Leave a few
                centimetres at the back for air to circulate.
            """,
            ),
            doc(
                0,
                "blog",
                "Washing dishes by hand the efficient way",
                """
                Scrape plates, soak pans while you eat, and wash in order: glasses,
                cutlery, plates, then pans. Use two basins, one to wash and one to rinse,
                instead of a running tap.

                Water hot enough to cut grease but comfortable for your hands works best; rubber
                gloves let you go hotter. Let dishes air-dry in a rack rather than towel-drying,
                which is quicker and more hygienic.
            """,
            ),
            doc(
                0,
                "product",
                "Whisper-quiet tower fan with remote",
                """
                A 36-inch oscillating tower fan with three speeds and a sleep mode at
                28 dB(A).

                A built-in timer switches it off after one to eight hours, and the display dims
                automatically at night. The removable rear grille makes dusting easy.
            """,
                specs=[("Noise", "28–52 dB(A)"), ("Price", "$79")],
                extra={"price": "$79"},
            ),
        ],
    ),
    topic(
        "109",
        "home",
        text="unclog bathroom sink without chemicals",
        description="""
            The user's bathroom sink drains slowly or is blocked, and they want to clear it
            without chemical drain cleaners.
        """,
        narrative="""
            A perfect document gives several mechanical or chemical-free methods in a
            sensible order (clean the pop-up stopper, plunger, plastic drain snake,
            cleaning the P-trap; hot water and baking soda as optional extras) with
            enough detail to do it. One method explained well is highly relevant or
            relevant. Kitchen sink, shower or toilet clogs are marginal, as are methods
            based on chemical drain cleaners. Unrelated uses of "sink" (heat sinks,
            kitchen sink materials) are not relevant.
        """,
        docs=[
            doc(
                4,
                "guide",
                "Unclog a bathroom sink without chemicals: 5 methods",
                """
                Most bathroom sink clogs are hair and soap caught just below the drain, so
                mechanical methods work better than chemicals. Try these in order.

                1. **Clean the stopper.** Unscrew the pivot rod nut behind the drain pipe,
                lift out the pop-up stopper and pull off the hair.
                2. **Use a plastic drain snake.** Push the barbed strip down the drain,
                twist and pull out. Repeat until it comes out clean.
                3. **Plunge.** Block the overflow hole with a wet cloth, fill the basin a
                few centimetres and plunge firmly.
                4. **Clean the P-trap.** Put a bucket underneath, unscrew the slip nuts by
                hand and rinse the trap.
                5. **Flush.** Finish with a kettle of hot water. Baking soda and vinegar can
                freshen the drain, but will not shift a real clog.
            """,
            ),
            doc(
                4,
                "forum",
                "Slow bathroom sink fixed in 10 minutes, no Drano",
                """
                My bathroom sink took five minutes to drain. I did not want to pour caustic
                stuff down it, so I tried the mechanical route.

                Pulled the pop-up stopper (one nut under the sink), and it was wrapped in
                a horrible mat of hair. Cleaned it, then ran a cheap plastic drain snake
                down and pulled out more. Drains instantly now.

                Reply from fixit_fran: if that does not work, the next step is removing
                the P-trap. Bucket under it, two slip nuts, done.
            """,
                extra={"replies": 17},
            ),
            doc(
                3,
                "guide",
                "How to remove and clean a P-trap",
                """
                The curved pipe under your sink traps water to block sewer smells, and it
                also traps debris. Place a bucket underneath, loosen the two slip nuts by
                hand or with pliers, and lower the trap. Clean it out with a bottle brush,
                check the washers and reassemble hand-tight plus a quarter turn.
            """,
            ),
            doc(
                3,
                "faq",
                "How do I take out a pop-up sink stopper?",
                """
                Look under the sink behind the drain pipe for a horizontal rod held by a
                nut. Unscrew the nut, pull the rod back, and the stopper lifts out from
                above. Clean off the hair and soap, then refit the rod through the hole in
                the stopper's tail.
            """,
            ),
            doc(
                3,
                "product",
                "ZipClear plastic drain snake, 3-pack",
                """
                Flexible barbed strips that grab hair and gunk in bathroom sinks and shower
                drains. No chemicals: slide it down, twist and pull out.
            """,
                specs=[
                    ("Length", "50 cm"),
                    ("Pack", "3 strips"),
                    ("Price", "$5.99"),
                ],
                extra={"price": "$5.99", "rating": "4.5 / 5"},
            ),
            doc(
                2,
                "blog",
                "Baking soda and vinegar: does it really unclog drains?",
                """
                The fizz looks impressive, but it is mostly carbon dioxide. It can loosen a
                little soap film and freshen a drain, but it will not dissolve a hair clog.
                Use it as maintenance after you have cleared the blockage mechanically.
            """,
            ),
            doc(
                2,
                "guide",
                "Plunging a sink the right way",
                """
                Use a cup plunger, not a toilet plunger. Seal the overflow hole with a wet
                cloth, add enough water to cover the plunger cup and pump hard ten to
                fifteen times before lifting away sharply.

                If the water drains away after plunging, run hot water for a minute to carry the
                loosened debris through. If it does not, the blockage is probably further down
                the pipe, and a drain snake or removing the trap is the next step.
            """,
            ),
            doc(
                2,
                "faq",
                "How do I stop hair clogging my bathroom sink?",
                """
                Fit a mesh drain strainer, clean the pop-up stopper once a month, and flush
                the drain with hot water weekly. Avoid washing hair in the sink.

                Once a month, pour a kettle of hot water down the drain to melt the soap scum
                that binds hair together. If the sink is already slow, clean the stopper before
                the clog gets worse.
            """,
            ),
            doc(
                1,
                "guide",
                "Clearing a blocked kitchen sink with a garbage disposal",
                """
                Turn off the disposal, check for a tripped reset button, and use an Allen
                key in the hole underneath to free a jam. Never put your hand inside. Grease
                clogs further down need a snake.

                Afterwards, run cold water and the disposal together for half a minute. Do not
                put fibrous peelings, coffee grounds or fat down a disposal; they are behind
                most kitchen sink clogs.
            """,
            ),
            doc(
                1,
                "forum",
                "Shower drain clogged, water up to my ankles",
                """
                Our shower drains so slowly that we stand in water.

                Reply from tileguy: pop off the cover and use a drain snake; shower clogs
                are nearly always hair. A wet vac on the drain also works.

                Reply from bathfixer_bea: also check whether the shower has a hair catcher under
                the cover that nobody ever empties. Ours was packed solid.
            """,
                extra={"replies": 7},
            ),
            doc(
                1,
                "product",
                "PowerFlow gel drain opener",
                """
                A thick gel that sinks through standing water to dissolve hair and soap.
                Pour half the bottle, wait 15 minutes and flush with hot water.
            """,
                specs=[("Volume", "1 L"), ("Price", "$7.49")],
                extra={"price": "$7.49"},
            ),
            doc(
                0,
                "guide",
                "Choosing a heat sink for your CPU",
                """
                A bigger heat sink with more fin area dissipates more heat. Check the socket
                compatibility and the height clearance of your case before buying.

                Tower coolers with heat pipes suit most desktop builds, while low-profile
                designs fit small cases. Apply a thin layer of fresh thermal paste when
                mounting, and make sure fans push air in the same direction as the case airflow.
            """,
                site="example-tech.test",
            ),
            doc(
                0,
                "review",
                "Granite vs stainless steel kitchen sinks",
                """
                Granite composite sinks are quiet and come in many colours, but can stain.
                Stainless steel is cheaper and tough but shows water spots.

                Gauge matters for steel: a lower number means thicker, quieter metal, and 16 or
                18 gauge is worth paying for. Undermount sinks make wiping crumbs from the
                counter easier, while top-mount sinks are simpler to fit into an existing
                worktop.
            """,
            ),
            doc(
                0,
                "blog",
                "Why do some objects float and others sink?",
                """
                An object floats when it displaces its own weight of water before it is
                fully submerged. Density explains why a steel ship floats while a steel
                nail sinks.

                That is also why a ball of modelling clay sinks but the same clay shaped into a
                bowl floats. Try it in the bath: the shape changes how much water the clay
                pushes aside, not how heavy it is.
            """,
                site="example-science.test",
            ),
        ],
    ),
    topic(
        "110",
        "garden",
        text="lawn mower won't start after winter",
        description="""
            The user's petrol lawn mower will not start at the beginning of the season and
            they want to get it running again.
        """,
        narrative="""
            A perfect document gives a troubleshooting sequence for a petrol mower after
            winter storage: stale fuel, a gummed carburettor, the spark plug, the air
            filter, the choke or primer, the safety bail, with how to fix each. Documents
            covering some of these causes are highly relevant or relevant. Winterising a
            mower, general mower maintenance or cordless mowers are marginal. Other
            engines that will not start (cars, snow blowers with different issues) or
            mower buying guides are not relevant.
        """,
        docs=[
            doc(
                4,
                "guide",
                "Lawn mower won't start after winter? Work through this",
                """
                Most spring no-starts come down to fuel, spark or air. Check them in order.

                1. **Stale fuel.** Petrol goes off in about a month. Drain the tank and
                refill with fresh fuel.
                2. **Gummed carburettor.** If it still will not start, spray carburettor
                cleaner into the air intake, or remove and clean the float bowl and jet.
                3. **Spark plug.** Pull it, clean or replace it, and check the gap.
                4. **Air filter.** A clogged filter chokes the engine; tap out or replace.
                5. **Choke and primer.** Prime three to five times or set the choke.
                6. **Safety bail.** Make sure the bail lever and its cable are working.

                Next autumn, run the tank dry or add a fuel stabiliser before storing.
            """,
            ),
            doc(
                4,
                "forum",
                "Mower dead after winter, fixed it myself (carb was gummed)",
                """
                Pulled the cord 50 times, nothing. Here is what I did.

                New spark plug: no change. Fresh fuel: no change. Sprayed carb cleaner in
                the intake and it fired for a second then died, which told me the
                carburettor was the problem. Took off the float bowl (one bolt), and the
                main jet was blocked with varnish from old fuel. Cleaned it with a thin
                wire and carb cleaner. Started on the second pull.

                Reply from smallengine_sam: textbook. Use stabiliser or ethanol-free fuel
                for storage and you will not see this again.
            """,
                extra={"replies": 27},
            ),
            doc(
                3,
                "guide",
                "How to clean a lawn mower carburettor",
                """
                Disconnect the spark plug lead and drain the fuel. Remove the air filter
                housing, then the float bowl under the carburettor. Spray carb cleaner
                through the jets and passages and clear the main jet with a fine wire.
                Check the float moves freely, reassemble and refill with fresh fuel.
            """,
            ),
            doc(
                3,
                "faq",
                "Can old gas stop my mower from starting?",
                """
                Yes. Petrol starts to degrade within weeks; the lighter parts evaporate and
                ethanol absorbs water. Old fuel does not ignite well and leaves varnish in
                the carburettor. Drain it, add fresh fuel, and if the engine still will not
                start, clean the carburettor.
            """,
            ),
            doc(
                3,
                "guide",
                "Checking and replacing a mower spark plug",
                """
                Pull the lead, unscrew the plug with a socket and look at the tip. Black and
                sooty, oily or worn plugs should be replaced. Set the gap with a feeler
                gauge, usually 0.76 mm, and tighten by hand plus a half turn.
            """,
            ),
            doc(
                2,
                "product",
                "Small engine spring tune-up kit",
                """
                Spark plug, air filter, fuel filter and a bottle of fuel stabiliser in one
                kit for walk-behind mowers with 140–190 cc engines.
            """,
                specs=[("Fits", "most 140–190 cc engines"), ("Price", "$16.95")],
                extra={
                    "price": "$16.95",
                    "rating": "4.3 / 5",
                },
            ),
            doc(
                2,
                "forum",
                "Pull cord hard to pull, mower won't start",
                """
                The recoil cord on my mower is really stiff this spring.

                Reply from mowerman: check the blade is not jammed with old grass, and
                that the bail lever is held against the handle. A bent crankshaft after
                hitting a root also makes it hard to pull.
            """,
                extra={"replies": 6},
            ),
            doc(
                2,
                "faq",
                "What does the choke on a lawn mower do?",
                """
                The choke restricts air so the engine gets a richer fuel mix for cold
                starts. Set it to choke for a cold engine, then move it to run once the
                engine warms up.

                Many newer mowers have an automatic choke or a primer bulb instead of a lever.
                If the engine floods from too much choke, wait a few minutes with the choke open
                before pulling again.
            """,
            ),
            doc(
                1,
                "guide",
                "How to winterise a petrol lawn mower",
                """
                Before winter, either run the tank dry or fill it with stabilised fuel and
                run for five minutes. Change the oil, clean under the deck, sharpen the
                blade and store the mower dry.

                Take the chance to check the air filter and replace the spark plug, so the mower
                is ready in spring. Store it in a shed or garage rather than under a tarp, where
                condensation collects.
            """,
            ),
            doc(
                1,
                "guide",
                "Sharpening a lawn mower blade",
                """
                Disconnect the spark plug, tip the mower with the air filter up, and remove
                the blade. File at the original angle, check the balance on a nail, and
                refit with the cutting edge facing the grass.
            """,
            ),
            doc(
                1,
                "review",
                "Cordless mowers: are they finally good enough?",
                """
                The best 40 V and 80 V cordless mowers now cut as well as petrol for lawns
                under a quarter acre, start at the push of a button and need no spring
                tune-up.

                Battery life is the limit: a 5 Ah pack covers roughly 450 square metres, so
                larger lawns need a second battery. They are much quieter, which your neighbours
                will appreciate on a Sunday morning.
            """,
            ),
            doc(
                0,
                "guide",
                "Car won't start in the cold? Check the battery first",
                """
                A weak battery is the most common cause of a car that will not start on a
                cold morning. A clicking sound when you turn the key points to the battery
                or the starter motor.

                If the engine turns over slowly, a jump start will usually get you going; then
                have the battery tested, since a weak one will fail again. Batteries older than
                five years are the most likely to give up on the first cold snap.
            """,
                site="example-auto.test",
            ),
            doc(
                0,
                "review",
                "Best lawn mowers for large lawns",
                """
                Self-propelled mowers with a 53 cm deck suit lawns up to half an acre;
                beyond that, consider a ride-on. Rear-wheel drive works best on slopes.

                For big lawns, look for a wide cutting deck, a large collection bag or a
                mulching option, and adjustable handle height. Electric start saves effort on a
                petrol machine. Our top picks balance cutting quality with comfort over long
                sessions.
            """,
            ),
            doc(
                0,
                "blog",
                "Planning the first lawn cut of spring",
                """
                Wait until the grass is growing steadily and the soil is firm. Set the
                mower high for the first cut and never remove more than a third of the
                blade length.

                Rake out dead grass and moss first, and pick up stones and twigs the winter left
                behind. Once the grass is growing well, mow weekly and lower the height
                gradually.
            """,
            ),
        ],
    ),
]
